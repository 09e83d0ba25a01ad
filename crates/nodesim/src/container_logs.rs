//! `GET /containerLogs/{namespace}/{pod}/{container}`: a simulated container's log, whole or
//! followed until the container stops or its Pod goes away.
//!
//! Mirrors `pkg/kubelet/server/server.go` (`getContainerLogs`), `pkg/kubelet/kubelet_pods.go`
//! (`validateContainerLogStatus`: the 400 for a container that is waiting or has no previous
//! instance) and the CRI log reader `pkg/kubelet/kuberuntime/logs/logs.go` (`tailLines`,
//! `sinceSeconds`/`sinceTime`, `limitBytes`, `timestamps` in RFC 3339 with nanoseconds, `follow`).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use k8s_openapi::api::core::v1::{ContainerState, Pod};
use k8s_openapi::jiff::Timestamp;
use tokio::sync::mpsc;

use crate::process::{self, LogLine};
use crate::streaming::{Body, Host, container, text};

/// How often a followed log looks at its container again.
const FOLLOW_POLL: Duration = Duration::from_millis(100);

/// The `PodLogOptions` the kubelet reads from the query (the API server validated them).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct LogQuery {
    pub(crate) follow: bool,
    pub(crate) previous: bool,
    pub(crate) timestamps: bool,
    pub(crate) since: Option<Timestamp>,
    pub(crate) tail_lines: Option<usize>,
    pub(crate) limit_bytes: Option<usize>,
}

impl LogQuery {
    /// Reads the query string; `now` anchors `sinceSeconds`. Unparsable values are ignored.
    pub(crate) fn parse(query: Option<&str>, now: Timestamp) -> LogQuery {
        let mut parsed = LogQuery::default();
        for (key, value) in query
            .unwrap_or_default()
            .split('&')
            .filter_map(|p| p.split_once('='))
        {
            let value = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
            let on = value == "true" || value == "1";
            match key {
                "follow" => parsed.follow = on,
                "previous" => parsed.previous = on,
                "timestamps" => parsed.timestamps = on,
                "tailLines" => parsed.tail_lines = value.parse().ok(),
                "limitBytes" => parsed.limit_bytes = value.parse().ok(),
                "sinceSeconds" => {
                    parsed.since = value.parse::<i64>().ok().and_then(|s| {
                        now.checked_sub(k8s_openapi::jiff::SignedDuration::from_secs(s))
                            .ok()
                    });
                }
                "sinceTime" => parsed.since = value.parse().ok(),
                _ => {}
            }
        }
        parsed
    }

    /// The bytes of `lines` this query selects (before `limitBytes`).
    pub(crate) fn select(&self, lines: &[LogLine]) -> Vec<u8> {
        let since = |line: &&LogLine| self.since.is_none_or(|since| line.at >= since);
        let kept: Vec<&LogLine> = lines.iter().filter(since).collect();
        let skip = self.tail_lines.map_or(0, |n| kept.len().saturating_sub(n));
        kept[skip..]
            .iter()
            .flat_map(|line| self.render(line))
            .collect()
    }

    /// The bytes of all of `lines`, with timestamps if asked.
    fn render_all(&self, lines: &[LogLine]) -> Vec<u8> {
        lines.iter().flat_map(|line| self.render(line)).collect()
    }

    fn render(&self, line: &LogLine) -> Vec<u8> {
        if self.timestamps {
            format!("{} {}", line.at, line.text).into_bytes()
        } else {
            line.text.clone().into_bytes()
        }
    }
}

/// One instance of a container, as its status tells: when it started and, once over, how it
/// ended.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Instance {
    started: Timestamp,
    exited: Option<(i32, Timestamp)>,
}

impl Instance {
    fn of(state: &ContainerState) -> Option<Instance> {
        if let Some(running) = &state.running {
            let started = running.started_at.as_ref()?.0;
            return Some(Instance {
                started,
                exited: None,
            });
        }
        let terminated = state.terminated.as_ref()?;
        let started = terminated.started_at.as_ref()?.0;
        let finished = terminated.finished_at.as_ref().map_or(started, |t| t.0);
        Some(Instance {
            started,
            exited: Some((terminated.exit_code, finished)),
        })
    }
}

/// Serves the log of `container` of Pod `namespace/pod`.
pub(crate) fn serve(
    host: &Arc<Host>,
    (namespace, pod_name, container_name): (&str, &str, &str),
    query: Option<&str>,
) -> hyper::Response<Body> {
    let pod = match host.pod(namespace, pod_name) {
        Ok(pod) => pod,
        Err(refusal) => return refusal.response(),
    };
    let status = match container(&pod, container_name) {
        Ok((_, status)) => status.cloned(),
        Err(refusal) => return refusal.response(),
    };
    let query = LogQuery::parse(query, Timestamp::now());
    let state = status.as_ref().and_then(|s| {
        if query.previous {
            s.last_state.as_ref()
        } else {
            s.state.as_ref()
        }
    });
    let Some(instance) = state.and_then(Instance::of) else {
        let message = if query.previous {
            format!(
                "previous terminated container {container_name:?} in pod {pod_name:?} not found"
            )
        } else {
            let reason = state
                .and_then(|s| s.waiting.as_ref())
                .and_then(|w| w.reason.clone())
                .unwrap_or_else(|| "ContainerCreating".to_owned());
            format!(
                "container {container_name:?} in pod {pod_name:?} is waiting to start: {reason}"
            )
        };
        return text(StatusCode::BAD_REQUEST, message);
    };
    let (sender, receiver) = mpsc::channel::<Bytes>(16);
    let follow = query.follow && instance.exited.is_none() && !query.previous;
    let key = format!("{namespace}/{pod_name}");
    let container_name = container_name.to_owned();
    let host = host.clone();
    tokio::spawn(async move {
        let mut budget = query.limit_bytes.unwrap_or(usize::MAX);
        let lines = log_of(&pod, &container_name, instance);
        let shown = lines.len();
        if !send(&sender, query.select(&lines), &mut budget).await || !follow {
            return;
        }
        // Follow: the container writes nothing more until it ends; then its exit line.
        loop {
            tokio::time::sleep(FOLLOW_POLL).await;
            let Some(pod) = host.pods.get_by_key(&key) else {
                return;
            };
            let now = container(&pod, &container_name)
                .ok()
                .and_then(|(_, s)| s.and_then(|s| s.state.as_ref()).and_then(Instance::of));
            match now {
                Some(now) if now == instance => {}
                Some(now) if now.started == instance.started => {
                    let lines = log_of(&pod, &container_name, now);
                    // Lines written after the first answer: `tailLines` and `since` chose
                    // where the log starts, not what follows.
                    let rest = query.render_all(&lines[shown..]);
                    let _ = send(&sender, rest, &mut budget).await;
                    return;
                }
                // Restarted, gone or unreadable: the followed instance is over.
                _ => return,
            }
            if sender.is_closed() {
                return;
            }
        }
    });
    let stream = futures_util::StreamExt::map(tokio_stream(receiver), |bytes| {
        Ok::<_, Infallible>(Frame::data(bytes))
    });
    let mut response = hyper::Response::new(StreamBody::new(stream).boxed());
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    response
}

fn log_of(pod: &Pod, container_name: &str, instance: Instance) -> Vec<LogLine> {
    match container(pod, container_name) {
        Ok((spec, _)) => process::log(pod, spec, instance.started, instance.exited),
        Err(_) => Vec::new(),
    }
}

/// Sends what fits in the `limitBytes` budget; `false` once the budget is spent or the reader
/// is gone.
async fn send(sender: &mpsc::Sender<Bytes>, mut bytes: Vec<u8>, budget: &mut usize) -> bool {
    bytes.truncate(*budget);
    *budget -= bytes.len();
    if !bytes.is_empty() && sender.send(Bytes::from(bytes)).await.is_err() {
        return false;
    }
    *budget > 0
}

/// The receiver as a stream of chunks.
fn tokio_stream(receiver: mpsc::Receiver<Bytes>) -> impl futures_util::Stream<Item = Bytes> {
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|bytes| (bytes, receiver))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(at: &str, text: &str) -> LogLine {
        LogLine {
            at: at.parse().unwrap(),
            text: format!("{text}\n"),
        }
    }

    #[test]
    fn the_query_reads_pod_log_options() {
        let now: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let query = LogQuery::parse(
            Some(
                "follow=true&tailLines=2&limitBytes=10&timestamps=true&sinceSeconds=30&container=c",
            ),
            now,
        );
        assert_eq!(
            query,
            LogQuery {
                follow: true,
                previous: false,
                timestamps: true,
                since: Some("2026-01-01T00:00:30Z".parse().unwrap()),
                tail_lines: Some(2),
                limit_bytes: Some(10),
            }
        );
        assert_eq!(LogQuery::parse(None, now), LogQuery::default());
    }

    #[test]
    fn tail_since_and_timestamps_select_and_render_lines() {
        let lines = [
            line("2026-01-01T00:00:00Z", "a"),
            line("2026-01-01T00:00:10Z", "b"),
            line("2026-01-01T00:00:20Z", "c"),
        ];
        let tail = LogQuery {
            tail_lines: Some(2),
            ..LogQuery::default()
        };
        assert_eq!(tail.select(&lines), b"b\nc\n");
        let since = LogQuery {
            since: Some("2026-01-01T00:00:15Z".parse().unwrap()),
            ..LogQuery::default()
        };
        assert_eq!(since.select(&lines), b"c\n");
        let stamped = LogQuery {
            timestamps: true,
            tail_lines: Some(1),
            ..LogQuery::default()
        };
        assert_eq!(stamped.select(&lines), b"2026-01-01T00:00:20Z c\n");
        let none = LogQuery {
            tail_lines: Some(0),
            ..LogQuery::default()
        };
        assert!(none.select(&lines).is_empty());
    }

    #[tokio::test]
    async fn the_byte_limit_cuts_and_ends_the_stream() {
        let (sender, mut receiver) = mpsc::channel(4);
        let mut budget = 3;
        assert!(!send(&sender, b"hello".to_vec(), &mut budget).await);
        assert_eq!(receiver.recv().await.unwrap(), "hel");
        let mut budget = 10;
        assert!(send(&sender, b"hi".to_vec(), &mut budget).await);
        assert_eq!(budget, 8);
    }
}
