/// An order.
///
/// +genclient
/// +genclient:onlyVerbs=get,list
/// +genclient:skipVerbs=delete
pub struct Order {
    pub metadata: ObjectMeta,
}
