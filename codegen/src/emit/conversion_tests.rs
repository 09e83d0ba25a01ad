use super::*;
use crate::testutil::load_files;

const GROUP: &str = "//! +groupName=fleet.example.com\nmod ship;\n";

/// The storage version: `crew` is an `i32`, the engine a nested struct, the state an enum.
const HUB: &str = "\
/// A ship.
/// +genclient
/// +kubegen:storageversion
pub struct Ship {
    pub metadata: ObjectMeta,
    /// Wanted.
    pub spec: ShipSpec,
}
/// Wanted.
pub struct ShipSpec {
    /// Crew size.
    pub crew: i32,
    /// Port of registry.
    pub port: String,
    /// Engines, each converted.
    pub engines: Vec<Engine>,
    /// State.
    pub state: Option<State>,
    /// Flag, same enum name but other variants.
    pub flag: Flag,
}
/// An engine.
pub struct Engine {
    /// Power.
    pub power: i64,
    /// Fuel.
    pub fuel: String,
}
/// A state.
pub enum State { Docked, Sailing }
/// A flag.
pub enum Flag { Red, Blue }
";

/// The other version: `crew` became an `i64`, `port` was renamed `home`, the engine lost `fuel`
/// and gained `diesel`, `Flag` has another variant.
const SPOKE: &str = "\
/// A ship.
/// +genclient
pub struct Ship {
    pub metadata: ObjectMeta,
    /// Wanted.
    pub spec: ShipSpec,
}
/// Wanted.
pub struct ShipSpec {
    /// Crew size.
    pub crew: i64,
    /// Port of registry.
    pub home: String,
    /// Engines, each converted.
    pub engines: Vec<Engine>,
    /// State.
    pub state: Option<State>,
    /// Flag.
    pub flag: Flag,
}
/// An engine.
pub struct Engine {
    /// Power.
    pub power: i64,
    /// Whether it burns diesel.
    pub diesel: bool,
}
/// A state.
pub enum State { Docked, Sailing }
/// A flag.
pub enum Flag { Red, Green }
";

/// The spoke module's conversion code, formatted.
fn spoke_code() -> String {
    let (_, model) = load_files(&[
        ("fleet/v1/mod.rs", GROUP),
        ("fleet/v1/ship.rs", HUB),
        ("fleet/v2/mod.rs", GROUP),
        ("fleet/v2/ship.rs", SPOKE),
    ])
    .expect("valid input");
    let spoke = model
        .packages
        .iter()
        .find(|p| p.version == "v2")
        .expect("v2 package");
    let file: syn::File = syn::parse2(spoke_tokens(&model, spoke)).expect("parses");
    prettyplease::unparse(&file)
}

/// The names of the `Conversion` trait's methods, in order.
fn trait_methods(code: &str) -> Vec<String> {
    let file = syn::parse_file(code).expect("parses");
    let Some(syn::Item::Trait(conversion)) = file.items.first() else {
        panic!("the trait comes first:\n{code}");
    };
    assert_eq!(conversion.ident, "Conversion");
    conversion
        .items
        .iter()
        .filter_map(|item| match item {
            syn::TraitItem::Fn(method) => Some(method.sig.ident.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn every_field_without_a_same_named_same_typed_counterpart_is_a_trait_method() {
    // These names are what rustc lists ("missing: ...") until the user implements them.
    assert_eq!(
        trait_methods(&spoke_code()),
        [
            "v1_ship_spec_crew",
            "v1_ship_spec_port",
            "v1_ship_spec_flag",
            "v1_engine_fuel",
            "v2_ship_spec_crew",
            "v2_ship_spec_home",
            "v2_ship_spec_flag",
            "v2_engine_diesel",
        ]
    );
}

#[test]
fn matching_fields_are_carried_over_recursively() {
    let code = spoke_code();
    for line in [
        "metadata: from.metadata,",
        "spec: ship_spec_into_hub::<C>(from.spec)?,",
        "power: from.power,",
        "state: from.state.map(state_into_hub).transpose()?,",
        "State::Docked => super::v1::State::Docked,",
        "let fuel = C::v1_engine_fuel(&from)?;",
    ] {
        assert!(code.contains(line), "missing `{line}` in:\n{code}");
    }
    assert!(
        code.contains("engines: from\n            .engines\n            .into_iter()\n            .map(engine_into_hub::<C>)"),
        "{code}"
    );
}

#[test]
fn the_hand_methods_take_the_other_versions_struct_and_return_the_field() {
    let code = spoke_code();
    assert!(
        code.contains("fn v1_ship_spec_crew(\n        from: &ShipSpec,\n    ) -> ::std::result::Result<i32, ::std::string::String>;"),
        "{code}"
    );
    assert!(
        code.contains("fn v2_ship_spec_flag(\n        from: &super::v1::ShipSpec,\n    ) -> ::std::result::Result<Flag, ::std::string::String>;"),
        "{code}"
    );
}

#[test]
fn the_storage_version_and_single_version_kinds_get_no_conversion_code() {
    let (_, model) = load_files(&[
        ("fleet/v1/mod.rs", GROUP),
        ("fleet/v1/ship.rs", HUB),
        ("fleet/v2/mod.rs", GROUP),
        ("fleet/v2/ship.rs", SPOKE),
    ])
    .expect("valid input");
    let hub = model
        .packages
        .iter()
        .find(|p| p.version == "v1")
        .expect("v1");
    assert!(spoke_tokens(&model, hub).is_empty());
    let (_, single) =
        load_files(&[("fleet/v1/mod.rs", GROUP), ("fleet/v1/ship.rs", HUB)]).expect("valid input");
    assert!(spoke_tokens(&single, &single.packages[0]).is_empty());
}
