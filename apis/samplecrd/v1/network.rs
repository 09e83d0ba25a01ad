/// A network with an address range and a gateway.
///
/// +genclient
/// +genclient:noStatus
pub struct Network {
    pub metadata: ObjectMeta,
    /// The network.
    pub spec: NetworkSpec,
}

/// The network.
pub struct NetworkSpec {
    /// Address range in CIDR notation, e.g. `192.168.0.0/16`.
    pub cidr: String,
    /// Gateway address inside `cidr`.
    pub gateway: String,
    /// Link MTU in bytes. `null` is a value of its own: "the platform's default", set on
    /// purpose and owned by whoever applied it, where absent leaves the choice to others.
    pub mtu: Option<Option<i32>>,
}
