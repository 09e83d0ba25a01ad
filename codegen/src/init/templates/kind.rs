/// A {{kind}}: the desired state in `spec`, what the operator last did in `status`.
///
/// +genclient{{scope_marker}}
/// +kubegen:printcolumn:name=Ready,type=string,jsonPath=.status.conditions[?(@.type=="Ready")].status
/// +kubegen:printcolumn:name=Age,type=date,jsonPath=.metadata.creationTimestamp
pub struct {{kind}} {
    pub metadata: ObjectMeta,
    /// What the user wants.
    pub spec: {{kind}}Spec,
    /// What the operator observed and did; written only by the operator.
    pub status: Option<{{kind}}Status>,
}

/// The desired state of a {{kind}}. Replace `message` with your kind's fields.
pub struct {{kind}}Spec {
    /// An example field.
    /// +kubegen:validation:MinLength=1
    pub message: String,
}

/// The observed state of a {{kind}}.
pub struct {{kind}}Status {
    /// The `metadata.generation` the operator last acted on.
    pub observed_generation: Option<i64>,
    /// Current conditions; `Ready` is `True` once the spec of `observedGeneration` is applied.
    /// +kubegen:optional
    /// +kubegen:listType=map
    /// +kubegen:listMapKeys=type
    pub conditions: Vec<Condition>,
}
