/// An order.
///
/// +genclient
pub struct Order {
    pub metadata: ObjectMeta,
}
