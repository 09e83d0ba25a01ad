//! Markdown tables of results and the ratios the targets are stated in.

use std::fmt::Write as _;

use crate::measure::Cost;

/// One measured row: a label ("kubegen", "kube-rs + strip managedFields", ...) and its cost.
#[derive(Clone, Debug)]
pub struct Row {
    /// What was measured.
    pub label: String,
    /// What it cost.
    pub cost: Cost,
}

/// Renders rows as a markdown table. "process" columns are the whole child process (what
/// `/usr/bin/time` reports, the same for every client, client-go included); "phase" columns are
/// measured inside kubegen's and kube-rs's children from the informer's start (client-go's
/// process does not report them: they read 0).
pub fn render(title: &str, rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n### {title}\n");
    let _ = writeln!(
        out,
        "| client | objects | wall ms | process CPU ms | max RSS MiB | phase CPU ms (user/sys) | peak RSS Δ MiB | allocated MiB | live MiB |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let cost = &row.cost;
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.0} | {:.1} | {:.0} ({:.0}/{:.0}) | {:.1} | {:.1} | {:.1} |",
            row.label,
            cost.objects,
            cost.wall_ms,
            cost.process_cpu_ms,
            cost.peak_rss_mib,
            cost.cpu_ms,
            cost.user_ms,
            cost.sys_ms,
            cost.peak_rss_delta_mib,
            cost.allocated_mib,
            cost.live_mib,
        );
    }
    out
}

/// One table of the ratios the memory issue sets targets on, a line per client row (every row but
/// the floors and client-go's), all from whole-process numbers:
/// - max RSS against client-go's default informer (≤0.8x), a metadata-only row against
///   client-go's metadata informer (≤0.8x) and against kubegen's full protobuf informer (≤0.35x);
/// - process CPU against client-go's protobuf informer (≤1x) and the cheaper kube-rs variant
///   (≤0.8x);
/// - wall time to synced against client-go's default.
///
/// A missing baseline prints "n/a".
pub fn ratios(rows: &[Row]) -> String {
    let find = |label: &str| {
        rows.iter()
            .find(|row| row.label == label)
            .map(|row| &row.cost)
    };
    let kube_cpu = rows
        .iter()
        .filter(|row| row.label == "kube-rs" || row.label == "kube-rs-any")
        .map(|row| row.cost.process_cpu_ms)
        .reduce(f64::min);
    let client_go = find("client-go");
    let client_go_protobuf = find("client-go-protobuf");
    let client_go_metadata = find("client-go-metadata");
    let full = find("kubegen-protobuf");
    let ratio = |num: f64, den: Option<f64>| match den {
        Some(den) if den > 0.0 => format!("{:.2}x", num / den),
        _ => "n/a".to_owned(),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n| client | max RSS / client-go's (≤0.8x) | max RSS / kubegen full (metadata ≤0.35x) | CPU / client-go protobuf (≤1x) | CPU / cheaper kube-rs (≤0.8x) | wall / client-go's |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
    let measured = rows.iter().filter(|row| {
        !matches!(row.label.as_str(), "floor" | "raw") && !row.label.starts_with("client-go")
    });
    for row in measured {
        let cost = &row.cost;
        let metadata = row.label.contains("metadata");
        let peer = if metadata {
            client_go_metadata
        } else {
            client_go
        };
        let versus_full = if metadata {
            ratio(cost.peak_rss_mib, full.map(|c| c.peak_rss_mib))
        } else {
            "-".to_owned()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            row.label,
            ratio(cost.peak_rss_mib, peer.map(|c| c.peak_rss_mib)),
            versus_full,
            ratio(
                cost.process_cpu_ms,
                client_go_protobuf.map(|c| c.process_cpu_ms)
            ),
            ratio(cost.process_cpu_ms, kube_cpu),
            ratio(cost.wall_ms, peer.map(|c| c.wall_ms)),
        );
    }
    out
}

/// A markdown table under a `### title`: `headers`, then one line per row of cells. Every column
/// but the first is right-aligned (they hold numbers).
pub fn markdown(title: &str, headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n### {title}\n");
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let align: Vec<&str> = (0..headers.len())
        .map(|column| if column == 0 { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out
}

/// The median of each measure of `costs` separately (interleaved runs of one client).
pub fn median(costs: &[Cost]) -> Cost {
    let of = |field: fn(&Cost) -> f64| {
        let mut values: Vec<f64> = costs.iter().map(field).collect();
        values.sort_by(f64::total_cmp);
        match values.len() {
            0 => 0.0,
            n if n % 2 == 1 => values[n / 2],
            n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
        }
    };
    Cost {
        objects: costs.first().map_or(0, |c| c.objects),
        wall_ms: of(|c| c.wall_ms),
        cpu_ms: of(|c| c.cpu_ms),
        user_ms: of(|c| c.user_ms),
        sys_ms: of(|c| c.sys_ms),
        peak_rss_delta_mib: of(|c| c.peak_rss_delta_mib),
        peak_rss_mib: of(|c| c.peak_rss_mib),
        process_cpu_ms: of(|c| c.process_cpu_ms),
        allocated_mib: of(|c| c.allocated_mib),
        live_mib: of(|c| c.live_mib),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, cpu_ms: f64) -> Row {
        Row {
            label: label.to_owned(),
            cost: Cost {
                objects: 10,
                wall_ms: 100.0,
                cpu_ms,
                process_cpu_ms: cpu_ms,
                peak_rss_mib: 8.0,
                live_mib: 4.0,
                ..Cost::default()
            },
        }
    }

    fn with_rss(mut row: Row, peak_rss_mib: f64) -> Row {
        row.cost.peak_rss_mib = peak_rss_mib;
        row
    }

    #[test]
    fn ratios_divide_each_client_by_client_go_and_the_cheaper_kube_rs() {
        let rows = [
            with_rss(row("client-go", 80.0), 10.0),
            with_rss(row("client-go-protobuf", 50.0), 12.0),
            with_rss(row("client-go-metadata", 40.0), 4.0),
            row("kube-rs", 120.0),
            row("kube-rs-any", 100.0),
            with_rss(row("kubegen-protobuf", 60.0), 8.0),
            with_rss(row("kubegen-metadata", 20.0), 2.0),
            row("floor", 50.0),
        ];
        let text = ratios(&rows);
        assert!(
            text.contains("| kubegen-protobuf | 0.80x | - | 1.20x | 0.60x | 1.00x |"),
            "{text}"
        );
        assert!(
            text.contains("| kubegen-metadata | 0.50x | 0.25x | 0.40x | 0.20x | 1.00x |"),
            "{text}"
        );
        assert!(!text.contains("| floor |"), "{text}");
        assert!(!text.contains("| client-go |"), "{text}");
    }

    #[test]
    fn median_takes_each_measure_separately() {
        let costs = [
            row("a", 30.0).cost,
            row("a", 10.0).cost,
            row("a", 20.0).cost,
        ];
        let mut slow = row("a", 0.0).cost;
        slow.wall_ms = 900.0;
        let median_cost = median(&[costs[0].clone(), costs[1].clone(), slow]);
        assert_eq!(median_cost.cpu_ms, 10.0);
        assert_eq!(median_cost.wall_ms, 100.0);
        assert_eq!(median(&costs).cpu_ms, 20.0);
        assert_eq!(median(&costs[..2]).cpu_ms, 20.0);
    }

    #[test]
    fn markdown_aligns_numbers_right_and_prints_each_row() {
        let rows = vec![
            vec!["labels".to_owned(), "2".to_owned()],
            vec!["unsharded".to_owned(), "1".to_owned()],
        ];
        assert_eq!(
            markdown("t", &["mode", "replicas"], &rows),
            "\n### t\n\n| mode | replicas |\n|---|---:|\n| labels | 2 |\n| unsharded | 1 |\n"
        );
    }

    #[test]
    fn render_prints_one_line_per_row() {
        let text = render("t", &[row("a", 1.0), row("b", 2.0)]);
        assert_eq!(
            text.lines()
                .filter(|line| line.starts_with("| a |"))
                .count(),
            1
        );
        assert_eq!(
            text.lines()
                .filter(|line| line.starts_with("| b |"))
                .count(),
            1
        );
    }
}
