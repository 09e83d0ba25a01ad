//! Which media type an OpenAPI request accepts: kube-openapi's handlers parse `Accept` with
//! `munnerz/goautoneg` and serve the first clause (by quality) they can produce, or 406.

use http::{HeaderMap, header};

/// Whether the `Accept` headers allow `application/json` (no header means anything).
pub(super) fn accepts_json(headers: &HeaderMap) -> bool {
    let values: Vec<&str> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.iter().all(|v| v.trim().is_empty()) {
        return true;
    }
    values
        .iter()
        .flat_map(|v| v.split(','))
        .filter_map(clause)
        .any(|(media, quality)| {
            quality > 0.0 && matches!(media.as_str(), "application/json" | "application/*" | "*/*")
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

    fn accepts(value: Option<&str>) -> bool {
        let mut headers = HeaderMap::new();
        if let Some(v) = value {
            headers.insert(header::ACCEPT, v.parse().unwrap());
        }
        accepts_json(&headers)
    }

    #[test]
    fn json_wildcards_and_no_header_accept_json() {
        for value in [
            None,
            Some("application/json"),
            Some("application/json, */*"),
            Some("*/*"),
            Some(
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json;q=0.9",
            ),
            Some("application/*;q=0.5"),
        ] {
            assert!(accepts(value), "{value:?}");
        }
    }

    #[test]
    fn protobuf_only_or_refused_json_is_not_acceptable() {
        for value in [
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
            "application/xml",
            "application/json;q=0",
        ] {
            assert!(!accepts(Some(value)), "{value}");
        }
    }
}
