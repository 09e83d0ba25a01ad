/// A customer order.
///
/// +genclient
/// +kubegen:printcolumn:name=Phase,type=string,jsonPath=.status.phase
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
    /// +kubegen:validation:MinItems=1
    /// +kubegen:listType=set
    pub items: Vec<String>,
    /// Where to deliver.
    /// +kubegen:validation:MinLength=1
    /// +kubegen:validation:MaxLength=63
    pub region: String,
    /// How to pack it.
    pub packing: Option<Packing>,
    /// The job that fulfils the order: every well-known Kubernetes type, so the generated crates
    /// show that each one's Rust path exists and the CRD that each one's schema is accepted.
    pub fulfilment: Option<Fulfilment>,
}

/// How to pack an order.
pub enum Packing {
    /// A box.
    Box,
    /// A gift box.
    /// +kubegen:value=gift-box
    GiftBox,
}

/// The job that fulfils an order.
///
/// +kubegen:validation:XValidation:rule="!has(self.deadline) || has(self.timeout)",message="a deadline needs a timeout"
pub struct Fulfilment {
    /// Which workers may take it.
    pub selector: Option<LabelSelector>,
    /// The worker pod.
    pub template: Option<PodTemplateSpec>,
    /// What the worker needs.
    pub resources: Option<ResourceRequirements>,
    /// Worker environment.
    /// +kubegen:optional
    pub env: Vec<EnvVar>,
    /// Nodes it may run on.
    /// +kubegen:optional
    pub tolerations: Vec<Toleration>,
    /// The object that asked for it.
    pub owner: Option<OwnerReference>,
    /// The object it reports on.
    pub subject: Option<ObjectReference>,
    /// The secret holding the courier's credentials.
    pub credentials: Option<LocalObjectReference>,
    /// Give up after this long, e.g. `1h30m`.
    pub timeout: Option<Duration>,
    /// Must be done by then.
    pub deadline: Option<MicroTime>,
    /// Courier-specific settings, kept as written.
    pub courier: Option<serde_json::Value>,
    /// A signed receipt (base64 in JSON).
    /// +kubegen:optional
    pub receipt: Vec<u8>,
}

/// Fulfilment progress.
pub struct OrderStatus {
    /// Shipped yet?
    pub shipped: Option<bool>,
    /// Where the order is.
    pub phase: Option<OrderPhase>,
    /// The latest observations of the order, one per type.
    /// +kubegen:optional
    /// +kubegen:listType=map
    /// +kubegen:listMapKeys=type
    pub conditions: Vec<Condition>,
}

/// Where an order is.
pub enum OrderPhase {
    /// Accepted.
    Pending,
    /// On its way.
    Shipping,
    /// Delivered.
    Delivered,
}
