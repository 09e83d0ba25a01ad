//! Which media type an OpenAPI request accepts: kube-openapi's handlers parse `Accept` with
//! `munnerz/goautoneg` and serve the first clause (by quality) they can produce, or 406. They
//! produce JSON and, for the v2 document and the v3 group-version documents, gnostic's protobuf
//! (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`, also spelled
//! `...spec.v2.v1.0+protobuf`; v3 likewise).

use http::{HeaderMap, header};

/// The format an OpenAPI document is served in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    Json,
    Protobuf,
}

/// The format of the first clause of `Accept` (by quality; ties in order) that is JSON, a JSON
/// wildcard or one of `protobuf` (the endpoint's protobuf media types); no header means JSON.
pub(super) fn choose(headers: &HeaderMap, protobuf: &[&str]) -> Option<Format> {
    let values: Vec<&str> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.iter().all(|v| v.trim().is_empty()) {
        return Some(Format::Json);
    }
    let mut clauses: Vec<(String, f32)> = values
        .iter()
        .flat_map(|v| v.split(','))
        .filter_map(clause)
        .filter(|(_, quality)| *quality > 0.0)
        .collect();
    clauses.sort_by(|a, b| b.1.total_cmp(&a.1));
    clauses.iter().find_map(|(media, _)| match media.as_str() {
        "application/json" | "application/*" | "*/*" => Some(Format::Json),
        other if protobuf.contains(&other) => Some(Format::Protobuf),
        _ => None,
    })
}

/// One `type/subtype;params;q=x` clause: the lower-cased media type and its quality.
fn clause(text: &str) -> Option<(String, f32)> {
    let mut parts = text.split(';');
    let media = parts.next()?.trim().to_ascii_lowercase();
    if media.is_empty() {
        return None;
    }
    let quality = parts
        .filter_map(|p| p.trim().strip_prefix("q="))
        .find_map(|q| q.trim().parse::<f32>().ok())
        .unwrap_or(1.0);
    Some((media, quality))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V2: &[&str] = &[
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
    ];

    fn chosen(value: Option<&str>) -> Option<Format> {
        let mut headers = HeaderMap::new();
        if let Some(v) = value {
            headers.insert(header::ACCEPT, v.parse().unwrap());
        }
        choose(&headers, V2)
    }

    #[test]
    fn json_wildcards_and_no_header_choose_json() {
        for value in [
            None,
            Some("application/json"),
            Some("application/json, */*"),
            Some("*/*"),
            Some(
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.8, application/json;q=0.9",
            ),
            Some("application/*;q=0.5"),
        ] {
            assert_eq!(chosen(value), Some(Format::Json), "{value:?}");
        }
    }

    #[test]
    fn the_endpoints_protobuf_types_choose_protobuf() {
        for value in [
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json",
            "application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        ] {
            assert_eq!(chosen(Some(value)), Some(Format::Protobuf), "{value}");
        }
    }

    #[test]
    fn other_types_or_refused_json_are_not_acceptable() {
        for value in [
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
            "application/xml",
            "application/json;q=0",
        ] {
            assert_eq!(chosen(Some(value)), None, "{value}");
        }
    }
}
