/// An order.
///
/// +genclient
/// +genclient:onlyVerbs=get,updateStatus
pub struct Order {
    pub metadata: ObjectMeta,
}
