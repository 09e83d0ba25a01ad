/// An order.
///
/// +genclient
pub struct Order {
    pub metadata: ObjectMeta,
}

/// Another kind claiming the same URL.
///
/// +genclient
/// +kubegen:plural=orders
pub struct Purchase {
    pub metadata: ObjectMeta,
}
