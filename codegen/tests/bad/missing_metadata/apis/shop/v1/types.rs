/// An order.
///
/// +genclient
pub struct Order {
    /// Spec.
    pub spec: OrderSpec,
}

/// Spec.
pub struct OrderSpec {
    /// Items.
    pub items: Vec<String>,
}
