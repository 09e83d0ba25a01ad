/// A virtual machine: the wanted size and the state a controller observed.
///
/// +genclient
/// +kubegen:storageversion
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
///
/// +kubegen:validation:XValidation:rule="self.cpu <= 64 || self.diskBus == 'virtio'",messageExpression="'disk bus ' + self.diskBus + ' supports at most 64 CPUs'",reason=FieldValueForbidden,fieldPath=".diskBus"
pub struct VirtualMachineSpec {
    /// Number of virtual CPUs.
    /// +kubegen:validation:Minimum=1
    /// +kubegen:validation:Maximum=128
    /// +kubegen:default=1
    pub cpu: i32,
    /// Memory size, e.g. `4Gi`.
    pub memory: Quantity,
    /// Boot image reference.
    pub image: String,
    /// Host name of the machine: a DNS label.
    /// +kubegen:validation:MinLength=1
    /// +kubegen:validation:MaxLength=63
    /// +kubegen:validation:Pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
    pub hostname: Option<String>,
    /// Public SSH keys to install, each once; when given, at least one.
    /// +kubegen:optional
    /// +kubegen:validation:MinItems=1
    /// +kubegen:validation:MaxItems=8
    /// +kubegen:validation:UniqueItems=true
    pub ssh_keys: Vec<String>,
    /// The bus the boot disk is attached to.
    /// +kubegen:validation:Enum=virtio;scsi;sata
    /// +kubegen:default="virtio"
    pub disk_bus: String,
    /// Boot disk size in GiB; it may grow but never shrink.
    /// +kubegen:validation:Minimum=1
    /// +kubegen:default=10
    /// +kubegen:validation:XValidation:rule="self >= oldSelf",message="diskGi may grow but not shrink"
    pub disk_gi: i32,
    /// Host CPU time each virtual CPU may use, as a share of one host CPU: above 0, below 4.
    /// +kubegen:validation:Minimum=0
    /// +kubegen:validation:ExclusiveMinimum=true
    /// +kubegen:validation:Maximum=4
    /// +kubegen:validation:ExclusiveMaximum=true
    pub cpu_share: Option<f64>,
    /// Who to mail about the machine.
    /// +kubegen:validation:Format=email
    pub owner: Option<String>,
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
