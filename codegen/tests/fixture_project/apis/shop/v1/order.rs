/// A customer order.
///
/// +genclient
pub struct Order {
    pub metadata: ObjectMeta,
    /// What was ordered.
    pub spec: OrderSpec,
    /// Fulfilment progress.
    pub status: Option<OrderStatus>,
}

/// What was ordered.
pub struct OrderSpec {
    /// Item names.
    pub items: Vec<String>,
    /// Where to deliver.
    pub region: String,
}

/// Fulfilment progress.
pub struct OrderStatus {
    /// Shipped yet?
    pub shipped: Option<bool>,
}
