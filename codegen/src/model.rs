//! The model: what `apis/` says, with every syn type gone.
//!
//! The parser builds it, the checker validates it, the emitters only read it. Keeping syn out of
//! here means an emitter cannot accidentally depend on how the user spelled something, only on what
//! it means. Mirrors the `types.Package`/`types.Type` universe that code-generator's gengo builds.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::validation::Validation;

/// Where something was written: a path relative to the input root's parent (`apis/police/...`)
/// and a 1-based line. Every diagnostic points at one of these.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// Display path, e.g. `apis/police/v1beta1/white_list.rs`.
    pub file: PathBuf,
    /// 1-based line number; 0 when the whole file is meant.
    pub line: usize,
}

/// Everything codegen knows: the user's API packages and the built-in kinds it should cover.
#[derive(Clone, Debug, Default)]
pub struct Model {
    /// One entry per `apis/<group>/<version>/`, sorted by (module, version).
    pub packages: Vec<Package>,
    /// Built-in (k8s-openapi) kinds, grouped per group/version, sorted by (module, version).
    pub builtins: Vec<BuiltinPackage>,
}

/// One API group version written by the user: `apis/<module>/<version>/`.
#[derive(Clone, Debug)]
pub struct Package {
    /// Rust module name of the group (the directory name), e.g. `police`.
    pub module: String,
    /// API version, e.g. `v1beta1`.
    pub version: String,
    /// API group from `+groupName=`, e.g. `police.example.com`.
    pub group: String,
    /// `+kubegen:apiApproved=<value>`: the `api-approved.kubernetes.io` annotation a CRD of a
    /// `*.k8s.io` group needs (the API server refuses one without it); allows such a group.
    pub api_approved: Option<String>,
    /// `+kubegen:imported`: the package was written by `kubegen import` from another project's
    /// CRD. That project installs the CRD, so the generator leaves it out of `crd` and
    /// `crd_v1beta1` (a user's manifests would otherwise replace it with a copy) and writes it
    /// only to `[import] crd`, where it can be compared with the input.
    pub imported: bool,
    /// `apis/<module>/<version>/mod.rs`.
    pub location: Location,
    /// Doc lines of the package (tag lines removed).
    pub docs: Vec<String>,
    /// Every struct of the package, in file order (files sorted by name).
    pub structs: Vec<StructDef>,
    /// Every unit-variant enum of the package, in file order (files sorted by name).
    pub enums: Vec<EnumDef>,
    /// The structs that are API kinds (carry a `+genclient` tag), in the same order.
    pub kinds: Vec<Kind>,
}

impl Package {
    /// Whether the generated `def` keeps the fields it does not know in
    /// [`UNKNOWN_FIELDS`]: every struct of an imported package but its kinds (whose unknown keys
    /// are `apiVersion` and `kind`). Another project owns the API and adds fields as it releases;
    /// an operator built on an older import must not drop them when it writes an object back.
    pub fn keeps_unknown_fields(&self, def: &StructDef) -> bool {
        self.imported && !def.tags.iter().any(|(tag, _)| *tag == Tag::GenClient)
    }
}

/// The Rust field of a generated struct that holds the JSON keys its type does not know
/// (see [`Package::keeps_unknown_fields`]); a field of that name is refused in such a package.
pub const UNKNOWN_FIELDS: &str = "unknown_fields";

/// A plain struct of an API package (a kind, its spec, status or any nested type).
#[derive(Clone, Debug)]
pub struct StructDef {
    /// Type name, e.g. `WhiteListSpec`.
    pub name: String,
    /// Doc lines (tag lines removed).
    pub docs: Vec<String>,
    /// Fields in declaration order.
    pub fields: Vec<Field>,
    /// Where the struct is declared.
    pub location: Location,
    /// Type tags as written, with their lines; the checker turns them into a [`Kind`].
    pub(crate) tags: Vec<(Tag, Location)>,
}

/// One parsed tag (`tags.rs` parses them). Type tags stay on their [`StructDef`] until the checker
/// resolves them into a [`Kind`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tag {
    /// `+groupName=police.example.com` (package).
    GroupName(String),
    /// `+kubegen:apiApproved=<url>` (package).
    ApiApproved(String),
    /// `+kubegen:imported` (package): written by `kubegen import`.
    Imported,
    /// `+genclient` (type).
    GenClient,
    /// `+genclient:nonNamespaced` (type).
    NonNamespaced,
    /// `+genclient:noStatus` (type).
    NoStatus,
    /// `+genclient:noVerbs` (type).
    NoVerbs,
    /// `+genclient:readonly` (type): get, list, watch only.
    ReadOnly,
    /// `+genclient:onlyVerbs=get,list` (type).
    OnlyVerbs(Vec<Verb>),
    /// `+genclient:skipVerbs=deleteCollection` (type).
    SkipVerbs(Vec<Verb>),
    /// `+genclient:method=Name,verb=get,subresource=scale,input=T,result=T` (type).
    Method(CustomMethod),
    /// `+kubegen:plural=` (type).
    Plural(String),
    /// `+kubegen:singular=` (type).
    Singular(String),
    /// `+kubegen:shortNames=a,b` (type).
    ShortNames(Vec<String>),
    /// `+kubegen:categories=a,b` (type).
    Categories(Vec<String>),
    /// `+kubegen:printcolumn:name=..,type=..,jsonPath=..` (type).
    PrintColumn(PrintColumn),
    /// `+kubegen:subresource:scale:specpath=..,statuspath=..,selectorpath=..`, or
    /// controller-gen's `+kubebuilder:subresource:scale:...` (type).
    Scale(ScaleSubresource),
    /// `+kubegen:storageversion`, or kubebuilder's `+kubebuilder:storageversion` (type): the
    /// version objects of a kind served in several versions are stored in.
    StorageVersion,
    /// `+kubegen:validation:<rule>=<value>` (field).
    Validation(Validation),
    /// `+kubegen:default=<json>` (field).
    Default(String),
    /// `+kubegen:required` (field).
    Required,
    /// `+kubegen:optional` (field).
    Optional,
    /// `+kubegen:listType=atomic|set|map` (field).
    ListType(String),
    /// `+kubegen:listMapKeys=a,b` (field).
    ListMapKeys(Vec<String>),
    /// `+kubegen:validation:XValidation:rule="<CEL>",message="<text>"` (field or struct).
    Rule(CelRule),
    /// `+kubegen:value=<json string>` (enum variant).
    Value(String),
    /// `+kubegen:json=<name>` (field): the JSON name, when camelCase of the Rust name is not it.
    Json(String),
    /// `+kubegen:schema=<JSON merge patch>` (field or struct): applied to the node's generated
    /// schema, for keywords no other marker carries (what `kubegen import` writes).
    Schema(serde_json::Value),
}

/// A Rust enum of unit variants: a string with a closed set of values (`type: string, enum`).
#[derive(Clone, Debug)]
pub struct EnumDef {
    /// Type name, e.g. `VirtualMachinePhase`.
    pub name: String,
    /// Doc lines (tag lines removed).
    pub docs: Vec<String>,
    /// Variants in declaration order; the first is the Rust `Default`.
    pub variants: Vec<Variant>,
    /// Where the enum is declared.
    pub location: Location,
}

/// One unit variant of an [`EnumDef`].
#[derive(Clone, Debug)]
pub struct Variant {
    /// Rust name, e.g. `Running`.
    pub name: String,
    /// The JSON string: the Rust name, or `+kubegen:value=`.
    pub value: String,
    /// Doc lines (tag lines removed).
    pub docs: Vec<String>,
    /// Where the variant is declared.
    pub location: Location,
}

/// One named field of a struct.
#[derive(Clone, Debug)]
pub struct Field {
    /// Rust field name without `r#`, e.g. `type_` or `allow_none`.
    pub name: String,
    /// Whether the user wrote a raw identifier (`r#type`).
    pub raw: bool,
    /// JSON name, computed like serde's `rename_all = "camelCase"`.
    pub json_name: String,
    /// Doc lines (tag lines removed).
    pub docs: Vec<String>,
    /// The field's type.
    pub ty: FieldType,
    /// Validation and defaulting markers.
    pub markers: FieldMarkers,
    /// Where the field is declared.
    pub location: Location,
}

impl Field {
    /// Whether the field must be present: not `Option`, not `+kubegen:optional` (or
    /// `+kubegen:required`).
    pub fn is_required(&self) -> bool {
        self.markers.required
            || (!matches!(self.ty, FieldType::Option(_)) && !self.markers.optional)
    }
}

/// The closed set of field types codegen understands (see `types.rs` for the accepted spellings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// `String`.
    String,
    /// `bool`.
    Bool,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `f64`.
    F64,
    /// `serde_json::Number`: a JSON number kept as written, so `1` and `1.0` stay apart
    /// (`type: number` without a format). What `kubegen import` gives a CRD's `number`.
    Number,
    /// k8s-openapi `Quantity`.
    Quantity,
    /// k8s-openapi `IntOrString`.
    IntOrString,
    /// k8s-openapi `Time`.
    Time,
    /// k8s-openapi `ObjectMeta` (only valid as a kind's `metadata`).
    ObjectMeta,
    /// `Vec<u8>`: base64 in JSON (`format: byte`), k8s-openapi `ByteString` in Rust.
    Bytes,
    /// `serde_json::Value`: any JSON (`x-kubernetes-preserve-unknown-fields`).
    Json,
    /// A well-known Kubernetes type by its bare name (`Condition`, `LabelSelector`, ...).
    WellKnown(crate::wellknown::WellKnown),
    /// `Option<T>`; `Option<Option<T>>` is a nullable field (see [`FieldType::is_nullable`]).
    Option(Box<FieldType>),
    /// `Vec<T>`.
    Vec(Box<FieldType>),
    /// `BTreeMap<String, T>`.
    Map(Box<FieldType>),
    /// Another struct or enum of the same package.
    Named(String),
}

impl FieldType {
    /// The type inside `Option` (both of a nullable field's), or the type itself.
    pub fn without_option(&self) -> &FieldType {
        match self {
            FieldType::Option(inner) => inner.without_option(),
            other => other,
        }
    }

    /// `Option<Option<T>>`: a field whose schema says `nullable: true`, where `null` is a value
    /// of its own. Absent is the outer `None`, `null` is `Some(None)`, so a decoded object
    /// re-encodes exactly as it came (a plain `Option` would turn `null` into absent).
    pub fn is_nullable(&self) -> bool {
        matches!(self, FieldType::Option(inner) if matches!(**inner, FieldType::Option(_)))
    }
}

/// Validation, defaulting and requiredness markers of one field (`+kubegen:validation:*` ...).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldMarkers {
    /// `Minimum=`.
    pub minimum: Option<f64>,
    /// `Maximum=`.
    pub maximum: Option<f64>,
    /// `ExclusiveMinimum=true`: the value must be greater than `Minimum`.
    pub exclusive_minimum: bool,
    /// `ExclusiveMaximum=true`: the value must be less than `Maximum`.
    pub exclusive_maximum: bool,
    /// `Pattern=`.
    pub pattern: Option<String>,
    /// `Enum=a;b;c`.
    pub enum_values: Vec<String>,
    /// `MinLength=`.
    pub min_length: Option<u64>,
    /// `MaxLength=`.
    pub max_length: Option<u64>,
    /// `MinItems=`.
    pub min_items: Option<u64>,
    /// `MaxItems=`.
    pub max_items: Option<u64>,
    /// `UniqueItems=true`: emitted as `x-kubernetes-list-type: set`, since API servers reject
    /// `uniqueItems: true` in CRD schemas.
    pub unique_items: bool,
    /// `Format=email`: a string format the API server checks.
    pub format: Option<String>,
    /// `+kubegen:default=<json>`, kept as the JSON text the user wrote.
    pub default: Option<String>,
    /// `+kubegen:required` (only meaningful on `Option` fields: none allowed, the checker says so).
    pub required: bool,
    /// `+kubegen:optional`: a non-`Option` field left out of the CRD's `required` (an empty list or
    /// map is then not written).
    pub optional: bool,
    /// `+kubegen:listType=atomic|set|map` (`x-kubernetes-list-type`).
    pub list_type: Option<String>,
    /// `+kubegen:listMapKeys=a,b` (`x-kubernetes-list-map-keys`).
    pub list_map_keys: Vec<String>,
    /// `+kubegen:validation:XValidation:...` (`x-kubernetes-validations`).
    pub rules: Vec<CelRule>,
    /// `+kubegen:schema=<JSON merge patch>`: applied last to the field's schema node.
    pub schema: Option<serde_json::Value>,
}

/// One `x-kubernetes-validations` entry: a CEL rule the API server evaluates. A rule that
/// mentions `oldSelf` is a transition rule: the server checks it on updates only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CelRule {
    /// The CEL expression, e.g. `self.minReplicas <= self.maxReplicas`.
    pub rule: String,
    /// The message shown when the rule fails.
    pub message: Option<String>,
    /// A CEL expression giving the message (wins over `message` when it evaluates).
    pub message_expression: Option<String>,
    /// The error's reason (`FieldValueForbidden`, ...; the server says `FieldValueInvalid`).
    pub reason: Option<String>,
    /// The field the error names, relative to the marked one (`.spec.size`).
    pub field_path: Option<String>,
    /// `optionalOldSelf=true`: a transition rule that also runs on create (`oldSelf` is then an
    /// empty optional).
    pub optional_old_self: Option<bool>,
}

/// Whether a kind lives in a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `namespaces/{ns}/<plural>`.
    Namespaced,
    /// `/<plural>` (`+genclient:nonNamespaced`).
    Cluster,
}

/// The client-go verbs a typed client can offer, in client-go's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// `create`.
    Create,
    /// `update`.
    Update,
    /// `updateStatus` (also gives `patch_status`).
    UpdateStatus,
    /// `delete`.
    Delete,
    /// `deleteCollection`.
    DeleteCollection,
    /// `get`.
    Get,
    /// `list`.
    List,
    /// `watch`.
    Watch,
    /// `patch`.
    Patch,
}

impl Verb {
    /// Every verb, in client-go's order.
    pub const ALL: [Verb; 9] = [
        Verb::Create,
        Verb::Update,
        Verb::UpdateStatus,
        Verb::Delete,
        Verb::DeleteCollection,
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Patch,
    ];

    /// The spelling used in tags (`onlyVerbs=get,list`).
    pub fn tag_name(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::UpdateStatus => "updateStatus",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deleteCollection",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Patch => "patch",
        }
    }

    /// Parses a tag spelling.
    pub fn from_tag(name: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|verb| verb.tag_name() == name)
    }
}

/// A `+genclient:method=...` extension: one extra typed-client method.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomMethod {
    /// Method name as written (`GetScale`); emitted in snake case.
    pub name: String,
    /// The verb it performs (`get`, `create`, `update` or `patch`).
    pub verb: Verb,
    /// Subresource path segment, e.g. `scale`.
    pub subresource: Option<String>,
    /// Request body type (`create`/`update`), a package type or `k8s_openapi::...` path.
    pub input: Option<String>,
    /// Response type, a package type or `k8s_openapi::...` path.
    pub result: Option<String>,
    /// Where the tag was written.
    pub location: Location,
}

/// One `+kubegen:printcolumn:...` marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintColumn {
    /// Column header.
    pub name: String,
    /// OpenAPI type: string, integer, number, boolean or date.
    pub type_: String,
    /// JSONPath into the object.
    pub json_path: String,
    /// Optional description.
    pub description: Option<String>,
    /// Optional format (e.g. `date-time`).
    pub format: Option<String>,
    /// 0 shows in the default view, higher only with `-o wide`.
    pub priority: Option<i64>,
}

/// The `scale` subresource of a CRD: where `kubectl scale`, a HorizontalPodAutoscaler or a
/// PodDisruptionBudget find the replica counts and the selector of a custom resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaleSubresource {
    /// `specReplicasPath` (`specpath=`), under `.spec`, e.g. `.spec.replicas`.
    pub spec_replicas_path: String,
    /// `statusReplicasPath` (`statuspath=`), under `.status`.
    pub status_replicas_path: String,
    /// `labelSelectorPath` (`selectorpath=`), under `.spec` or `.status`: the selector as a
    /// string, which an HPA needs.
    pub label_selector_path: Option<String>,
}

/// A user kind (a CRD) or a built-in kind (from k8s-openapi).
#[derive(Clone, Debug)]
pub struct Kind {
    /// Kind name, e.g. `WhiteList`.
    pub name: String,
    /// Rust module of the group, e.g. `police`, `core`.
    pub module: String,
    /// API group, `""` for the legacy core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// Verbs the typed client offers (empty with `+genclient:noVerbs`).
    pub verbs: BTreeSet<Verb>,
    /// Whether the kind has a `status` field and no `+genclient:noStatus`.
    pub has_status: bool,
    /// Lower-case plural (the URL segment), e.g. `whitelists`.
    pub plural: String,
    /// Lower-case singular.
    pub singular: String,
    /// Short names (`kubectl get wl`).
    pub short_names: Vec<String>,
    /// Categories (`kubectl get all`).
    pub categories: Vec<String>,
    /// Additional printer columns.
    pub print_columns: Vec<PrintColumn>,
    /// The `scale` subresource, when the kind has one.
    pub scale: Option<ScaleSubresource>,
    /// Custom methods.
    pub methods: Vec<CustomMethod>,
    /// Where the kind is declared.
    pub location: Location,
    /// Whether it is a k8s-openapi built-in (no CRD, no type emitted, re-exported instead).
    pub builtin: bool,
    /// `+kubegen:storageversion`: objects are stored in this version (required on exactly one
    /// version of a kind served in several).
    pub storage_version: bool,
}

impl Kind {
    /// Whether the kind has `verb`.
    pub fn has(&self, verb: Verb) -> bool {
        self.verbs.contains(&verb)
    }

    /// The collection path with placeholders, e.g.
    /// `/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists`.
    pub fn collection_path(&self) -> String {
        let prefix = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match self.scope {
            Scope::Namespaced => format!("{prefix}/namespaces/{{namespace}}/{}", self.plural),
            Scope::Cluster => format!("{prefix}/{}", self.plural),
        }
    }

    /// `apiVersion` value, e.g. `police.example.com/v1beta1` or `v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// Built-in kinds of one group version, re-exported from `k8s_openapi::api::<module>::<version>`.
#[derive(Clone, Debug)]
pub struct BuiltinPackage {
    /// Module name (`core`, `apps`, `events`), also the k8s-openapi module.
    pub module: String,
    /// API group (`""`, `apps`, `events.k8s.io`).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kinds, sorted by name.
    pub kinds: Vec<Kind>,
}
