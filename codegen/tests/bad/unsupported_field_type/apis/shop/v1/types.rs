/// An order.
///
/// +genclient
pub struct Order {
    pub metadata: ObjectMeta,
    /// Count.
    pub count: u32,
    /// Labels.
    pub labels: HashMap<String, String>,
}
