/// A set of machines.
///
/// +genclient
/// +kubegen:shortNames=ms
/// +kubegen:printcolumn:name=Replicas,type=integer,jsonPath=.spec.replicas,priority=0
pub struct MachineSet {
    pub metadata: ObjectMeta,
    /// Wanted machines.
    pub spec: MachineSetSpec,
}

/// Wanted machines.
pub struct MachineSetSpec {
    /// How many.
    /// +kubegen:validation:Minimum=0
    /// +kubegen:default=1
    pub replicas: i32,
    /// Machine labels.
    /// +kubegen:optional
    pub labels: BTreeMap<String, String>,
    /// Memory per machine.
    pub memory: Option<Quantity>,
    /// Port or name.
    pub port: Option<IntOrString>,
    /// Weight.
    pub weight: Option<f64>,
}
