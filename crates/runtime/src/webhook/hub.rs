//! kubegen's generated conversions served as a [`Convert`]: controller-runtime's
//! `conversion.Hub` / `conversion.Convertible` pair (`pkg/webhook/conversion/conversion.go`,
//! which converts `src -> hub -> dst`), without its reflection.
//!
//! Codegen emits, in each non-storage version module of a multi-version kind,
//! `<Kind>::into_hub::<C>` and `<Kind>::from_hub::<C>` (the storage version is the hub; `C` is the
//! user's implementation of that module's `Conversion` trait, the fields it cannot match). This
//! module holds the part every kind shares, written once: find the object's version by its
//! `apiVersion`, decode it, go through the hub, encode in the desired version.
//!
//! ```ignore
//! server.add_conversion(
//!     HubConversion::<v1alpha1::VirtualMachine>::new()
//!         .spoke(v1::VirtualMachine::into_hub::<Hands>, v1::VirtualMachine::from_hub::<Hands>),
//! );
//! ```

use k8s_openapi::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::conversion::Convert;

type IntoHub<H> = Box<dyn Fn(Value) -> Result<H, String> + Send + Sync>;
type FromHub<H> = Box<dyn Fn(H) -> Result<Value, String> + Send + Sync>;

/// One non-storage version: how its objects go to the hub and back.
struct Spoke<H> {
    /// `group/version` of the spoke.
    api_version: &'static str,
    into_hub: IntoHub<H>,
    from_hub: FromHub<H>,
}

/// The versions of one kind, converted through its storage version `H` (the hub).
///
/// # Guarantees
/// - An object already in the desired version is handed back untouched (the `Conversions`
///   registry does not even call this).
/// - Metadata crosses as `ObjectMeta`, whole; `apiVersion` and `kind` come from the target type.
/// - A version that was not registered, or an object that does not decode as its version's type,
///   is an error naming both, which the API server turns into the failed request's message.
pub struct HubConversion<H> {
    spokes: Vec<Spoke<H>>,
}

impl<H> Default for HubConversion<H> {
    fn default() -> Self {
        HubConversion { spokes: Vec::new() }
    }
}

impl<H> HubConversion<H>
where
    H: Resource + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    /// No spoke yet: objects of the hub version only.
    pub fn new() -> Self {
        HubConversion::default()
    }

    /// Adds version `S` with the generated conversions to and from the hub.
    #[must_use]
    pub fn spoke<S>(
        mut self,
        into_hub: fn(S) -> Result<H, String>,
        from_hub: fn(H) -> Result<S, String>,
    ) -> Self
    where
        S: Resource + Serialize + DeserializeOwned + 'static,
    {
        self.spokes.push(Spoke {
            api_version: S::API_VERSION,
            into_hub: Box::new(move |object| into_hub(decode::<S>(object)?)),
            from_hub: Box::new(move |hub| encode(&from_hub(hub)?)),
        });
        self
    }

    fn spoke_of(&self, api_version: &str) -> Result<&Spoke<H>, String> {
        self.spokes
            .iter()
            .find(|spoke| spoke.api_version == api_version)
            .ok_or_else(|| {
                format!(
                    "{} has no conversion registered for version {api_version:?} (hub {})",
                    H::KIND,
                    H::API_VERSION
                )
            })
    }
}

impl<H> Convert for HubConversion<H>
where
    H: Resource + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    fn convert(&self, object: Value, desired_api_version: &str) -> Result<Value, String> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let hub = if from == H::API_VERSION {
            decode::<H>(object)?
        } else {
            (self.spoke_of(&from)?.into_hub)(object)?
        };
        if desired_api_version == H::API_VERSION {
            encode(&hub)
        } else {
            (self.spoke_of(desired_api_version)?.from_hub)(hub)
        }
    }
}

fn decode<T: Resource + DeserializeOwned>(object: Value) -> Result<T, String> {
    serde_json::from_value(object).map_err(|e| {
        format!(
            "the object is not a valid {} {}: {e}",
            T::API_VERSION,
            T::KIND
        )
    })
}

fn encode<T: Resource + Serialize>(object: &T) -> Result<Value, String> {
    serde_json::to_value(object)
        .map_err(|e| format!("{} {} does not encode: {e}", T::API_VERSION, T::KIND))
}

#[cfg(test)]
#[path = "hub_tests.rs"]
mod tests;
