/// A virtual machine: the wanted size and the state a controller observed.
///
/// +genclient
/// +kubegen:shortNames=vm,vms
/// +kubegen:printcolumn:name=Status,type=string,jsonPath=.status.phase
/// +kubegen:printcolumn:name=CPU,type=integer,jsonPath=.spec.cpu
/// +kubegen:printcolumn:name=Memory,type=string,jsonPath=.spec.memory
/// +kubegen:printcolumn:name=Age,type=date,jsonPath=.metadata.creationTimestamp
pub struct VirtualMachine {
    pub metadata: ObjectMeta,
    /// The wanted machine.
    pub spec: VirtualMachineSpec,
    /// The observed machine.
    pub status: Option<VirtualMachineStatus>,
}

/// The wanted machine.
pub struct VirtualMachineSpec {
    /// Number of virtual CPUs.
    /// +kubegen:validation:minimum=1
    /// +kubegen:validation:maximum=128
    pub cpu: i32,
    /// Memory size, e.g. `4Gi`.
    pub memory: Quantity,
    /// Boot image reference.
    pub image: String,
    /// Extra labels for the hypervisor.
    /// +kubegen:optional
    pub annotations: BTreeMap<String, String>,
}

/// The observed machine.
pub struct VirtualMachineStatus {
    /// Lifecycle phase.
    pub phase: Option<VirtualMachinePhase>,
    /// Address of the running machine.
    pub ip: Option<String>,
    /// When the machine last started.
    pub started_at: Option<Time>,
    /// The latest observations of the machine's state (`Ready`, ...), one per type.
    /// +kubegen:optional
    /// +kubegen:listType=map
    /// +kubegen:listMapKeys=type
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` the status was computed from.
    pub observed_generation: Option<i64>,
}

/// The lifecycle phase of a virtual machine.
pub enum VirtualMachinePhase {
    /// Accepted; the hypervisor has not started it yet.
    Pending,
    /// Running on a hypervisor.
    Running,
    /// Stopped; its disk is kept.
    Stopped,
    /// The hypervisor could not run it; see the conditions.
    Failed,
}
