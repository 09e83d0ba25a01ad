/// The images and tags allowed for Deployments in this WhiteList's namespace. The image-police
/// controller acts on every Deployment of the namespace whose containers use an image not listed.
///
/// +genclient
/// +kubegen:shortNames=wl
/// +kubegen:categories=police
/// +kubegen:printcolumn:name=Ready,type=string,jsonPath=.status.conditions[?(@.type=="Ready")].status
/// +kubegen:printcolumn:name=Violations,type=integer,jsonPath=.status.violationsHandled
/// +kubegen:printcolumn:name=Age,type=date,jsonPath=.metadata.creationTimestamp
pub struct WhiteList {
    pub metadata: ObjectMeta,
    /// What is allowed.
    pub spec: WhiteListSpec,
    /// What the controller last observed and did.
    pub status: Option<WhiteListStatus>,
}

/// The allowed images.
pub struct WhiteListSpec {
    /// Allowed images, each with its allowed tags.
    pub images: Vec<ImageRule>,
    /// true means an empty `images` list allows no image at all; without it an empty list is a
    /// configuration error.
    pub allow_none: Option<bool>,
}

/// One allowed image and the tags allowed for it.
pub struct ImageRule {
    /// Image name without tag, e.g. `docker.io/library/nginx`. To allow an image pinned by digest,
    /// name the exact digest here (`docker.io/library/nginx@sha256:...`) and list no tags: digests
    /// cannot be matched against tags.
    /// +kubegen:validation:MinLength=1
    pub name: String,
    /// Allowed tags; every allowed tag must be listed (there is no wildcard). Empty only for a
    /// digest rule.
    pub tags: Vec<String>,
}

/// Observed state of a WhiteList.
pub struct WhiteListStatus {
    /// The `metadata.generation` the controller last acted on.
    pub observed_generation: Option<i64>,
    /// Current conditions (`Ready`).
    pub conditions: Vec<WhiteListCondition>,
    /// How many violations the controller has handled in total.
    pub violations_handled: Option<i64>,
    /// The most recent violations, newest first.
    pub last_violations: Vec<Violation>,
}

/// A condition of a WhiteList, following the Kubernetes condition conventions.
pub struct WhiteListCondition {
    /// Condition type, e.g. `Ready`.
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    /// +kubegen:validation:Enum=True;False;Unknown
    pub status: String,
    /// Machine-readable reason of the last transition.
    pub reason: Option<String>,
    /// Human-readable details.
    pub message: Option<String>,
    /// When the status last changed.
    pub last_transition_time: Option<Time>,
}

/// A container that used an image not on the list.
pub struct Violation {
    /// Name of the Deployment.
    pub deployment: String,
    /// Name of the offending container.
    pub container: String,
    /// The image reference it used.
    pub image: String,
    /// Why the image is not allowed.
    pub reason: String,
    /// When the controller acted.
    pub time: Option<Time>,
}
