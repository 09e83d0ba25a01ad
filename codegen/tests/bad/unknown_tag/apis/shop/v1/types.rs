/// An order.
///
/// +genclient
/// +genclient:nonNamespace
pub struct Order {
    pub metadata: ObjectMeta,
}
