use crate::testutil::errors;

#[test]
fn a_unit_variant_enum_is_a_valid_field_type() {
    let types = "pub enum Phase {\n    Pending,\n    /// +kubegen:value=in-progress\n    InProgress,\n}\n\
                 pub struct Status {\n    pub phase: Option<Phase>,\n}\n";
    assert_eq!(errors(types), Vec::<String>::new());
}

#[test]
fn enums_with_data_discriminants_or_generics_are_named_with_their_line() {
    let types = "pub enum Shape {\n    Circle(i32),\n    Square { side: i32 },\n    Dot = 3,\n}\n\
                 pub enum Wrap<T> {\n    A,\n}\n";
    assert_eq!(
        errors(types),
        [
            "2: variant `Shape::Circle` carries data: only unit-variant enums are supported",
            "3: variant `Shape::Square` carries data: only unit-variant enums are supported",
            "4: variant `Shape::Dot` has a discriminant: only unit-variant enums are supported",
            "6: enum `Wrap` is generic",
        ]
    );
}

#[test]
fn enum_values_must_be_distinct_and_enums_need_variants() {
    let types = "pub enum Phase {\n    Up,\n    /// +kubegen:value=Up\n    Running,\n}\n\
                 pub enum Empty {}\n";
    assert_eq!(
        errors(types),
        [
            "4: variant `Phase::Running` has an empty or duplicate value `Up`",
            "6: enum `Empty` has no variants",
        ]
    );
}

#[test]
fn tags_on_an_enum_are_rejected() {
    let types = "/// +kubegen:plural=phases\npub enum Phase {\n    Up,\n}\n";
    assert_eq!(errors(types), ["1: tags are not allowed on enum `Phase`"]);
}

#[test]
fn a_type_may_not_take_a_well_known_name_nor_share_a_name() {
    let types = "pub struct Condition {\n    pub a: String,\n}\n\
                 pub struct Spec {\n    pub a: String,\n}\npub enum Spec {\n    A,\n}\n";
    assert_eq!(
        errors(types),
        [
            "1: `Condition` is the name of a well-known Kubernetes type",
            "7: duplicate type `Spec` in demo/v1",
        ]
    );
}

#[test]
fn types_without_a_default_need_option() {
    let types = "pub struct Spec {\n    pub every: Duration,\n    pub timeout: Option<Duration>,\n\
                 pub steps: Vec<Duration>,\n    pub ready: Condition,\n    pub at: MicroTime,\n\
                 pub since: Time,\n    pub all: Vec<Condition>,\n}\n";
    assert_eq!(
        errors(types),
        [
            "2: `Spec.every`: `Duration` has no default value",
            "5: `Spec.ready`: `Condition` has no default value",
            "6: `Spec.at`: `MicroTime` has no default value",
            "7: `Spec.since`: `Time` has no default value",
        ]
    );
}

#[test]
fn an_unknown_type_names_both_struct_and_enum_in_its_hint() {
    let types = "pub struct Spec {\n    pub size: Size,\n}\n";
    assert_eq!(
        errors(types),
        ["2: `Spec.size` refers to unknown type `Size`"]
    );
}

#[test]
fn string_markers_on_an_enum_field_are_rejected() {
    let types = "pub enum Phase {\n    Up,\n}\npub struct Spec {\n\
                 /// +kubegen:validation:Enum=Up\n    pub phase: Phase,\n}\n";
    assert_eq!(
        errors(types),
        ["6: `Spec.phase`: `+kubegen:validation:Enum` needs a string"]
    );
}

#[test]
fn each_marker_on_a_type_it_cannot_apply_to_names_type_and_field() {
    let types = r"pub struct Spec {
    /// +kubegen:validation:MinLength=1
    pub count: i32,
    /// +kubegen:validation:Minimum=1
    pub name: String,
    /// +kubegen:validation:MaxItems=1
    /// +kubegen:validation:Format=email
    pub flag: bool,
    /// +kubegen:validation:Maximum=1
    /// +kubegen:validation:ExclusiveMinimum=true
    pub ratio: f64,
    /// +kubegen:validation:UniqueItems=true
    /// +kubegen:listType=atomic
    pub tags: Vec<String>,
    /// +kubegen:validation:UniqueItems=true
    pub rules: Vec<Rule>,
}
pub struct Rule {
    pub name: String,
}
";
    assert_eq!(
        errors(types),
        [
            "3: `Spec.count`: `+kubegen:validation:MinLength` needs a string",
            "5: `Spec.name`: `+kubegen:validation:Minimum` needs a number",
            "8: `Spec.flag`: `+kubegen:validation:Format` needs a string",
            "8: `Spec.flag`: `+kubegen:validation:MaxItems` needs a list",
            "11: `Spec.ratio`: `+kubegen:validation:ExclusiveMinimum` needs a `Minimum` beside it",
            "14: `Spec.tags`: `+kubegen:validation:UniqueItems` needs no `+kubegen:listType` other than `set`",
            "16: `+kubegen:validation:UniqueItems` on `rules`, whose items are not scalars",
        ]
    );
}

#[test]
fn defaults_must_be_json_of_the_field_type() {
    let types = r#"pub enum Bus {
    Virtio,
}
pub struct Spec {
    /// +kubegen:default=three
    pub a: i32,
    /// +kubegen:default="3"
    pub b: i32,
    /// +kubegen:default=3000000000
    pub c: i32,
    /// +kubegen:default="ide"
    pub d: Bus,
    /// +kubegen:default={"nope": 1}
    pub e: Option<Inner>,
    /// +kubegen:default="2024-01-01T00:00:00Z"
    pub f: Option<Time>,
    /// +kubegen:default={"size": 2}
    pub g: Option<Inner>,
    /// +kubegen:default=["a"]
    pub h: Vec<String>,
    /// +kubegen:default={}
    pub i: Option<Inner>,
    /// +kubegen:default=2
    pub j: serde_json::Number,
    /// +kubegen:default=0.5
    pub k: Option<serde_json::Number>,
}
pub struct Inner {
    pub size: i32,
}
"#;
    assert_eq!(
        errors(types),
        [
            "6: `Spec.a`: `+kubegen:default=three`: is not JSON",
            "8: `Spec.b`: `+kubegen:default=\"3\"`: `\"3\"` is not a 32-bit integer",
            "10: `Spec.c`: `+kubegen:default=3000000000`: `3000000000` is not a 32-bit integer",
            "12: `Spec.d`: `+kubegen:default=\"ide\"`: `\"ide\"` is not one of [\"Virtio\"]",
            "14: `Spec.e`: `+kubegen:default={\"nope\": 1}`: `nope` is not a field of `Inner`",
            "16: `Spec.f`: `+kubegen:default=\"2024-01-01T00:00:00Z\"`: a default on a `Time` field is not supported (only strings, numbers, booleans, quantities, int-or-strings, enums, structs of the package, and lists and maps of them)",
            "22: `Spec.i`: `+kubegen:default={}`: `{}` lacks `size`, a required field of `Inner` (the API server checks an object default as written, without its nested defaults)",
            "26: `Spec.k`: `+kubegen:default=0.5`: `0.5` is not a whole number (a `serde_json::Number` default cannot be a fraction)",
        ]
    );
}

#[test]
fn cel_rules_are_allowed_on_plain_structs() {
    let types = "/// +kubegen:validation:XValidation:rule=\"self.min <= self.max\"\n\
                 pub struct Range {\n    pub min: i32,\n    pub max: i32,\n}\n";
    assert_eq!(errors(types), Vec::<String>::new());
}

#[test]
fn option_may_wrap_a_field_once_or_twice_and_nothing_else() {
    let types = "pub struct Spec {\n    pub a: Option<i32>,\n    pub b: Option<Option<i32>>,\n\
                 pub c: Option<Option<Option<i32>>>,\n    pub d: Option<Vec<Option<String>>>,\n\
                 pub e: BTreeMap<String, Option<i32>>,\n}\n";
    assert_eq!(
        errors(types),
        [
            "4: `Spec.c` has more than two `Option`s",
            "5: `Spec.d` has an `Option` inside a list or map",
            "6: `Spec.e` has an `Option` inside a list or map",
        ]
    );
}

#[test]
fn an_imported_package_reserves_the_unknown_fields_name_except_on_kinds() {
    let files = [
        (
            "demo/v1/mod.rs",
            "//! +groupName=demo.example.com\n//! +kubegen:imported\n",
        ),
        (
            "demo/v1/types.rs",
            "/// +genclient\npub struct Thing {\n    pub metadata: ObjectMeta,\n    \
             pub unknown_fields: Option<String>,\n    pub spec: Option<Spec>,\n}\n\
             pub struct Spec {\n    pub unknown_fields: Option<String>,\n}\n",
        ),
    ];
    let diagnostics: Vec<String> = match crate::testutil::load_files(&files) {
        Ok(_) => Vec::new(),
        Err(error) => error
            .diagnostics()
            .iter()
            .map(|d| format!("{}: {}", d.location.line, d.message))
            .collect(),
    };
    assert_eq!(
        diagnostics,
        ["8: `Spec.unknown_fields`: the name is taken in an imported package"]
    );
}

#[test]
fn only_a_nullable_option_may_be_required() {
    let types = "pub struct Spec {\n    /// +kubegen:required\n    pub owner: Option<Option<String>>,\n\
                 /// +kubegen:required\n    pub name: Option<String>,\n}\n";
    assert_eq!(
        errors(types),
        ["5: `Spec.name` is both optional and `+kubegen:required`"]
    );
}
