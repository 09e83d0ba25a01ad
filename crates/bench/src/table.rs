//! Markdown tables of results and the ratios the targets are stated in.

use std::fmt::Write as _;

use crate::measure::Cost;

/// One measured row: a label ("kubegen", "kube-rs + strip", ...) and its cost.
#[derive(Clone, Debug)]
pub struct Row {
    /// What was measured.
    pub label: String,
    /// What it cost.
    pub cost: Cost,
}

/// Renders rows as a markdown table.
pub fn render(title: &str, rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n### {title}\n");
    let _ = writeln!(
        out,
        "| client | objects | wall ms | CPU ms (user/sys) | peak RSS Δ MiB | allocated MiB | live MiB | objects/s |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let cost = &row.cost;
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.0} ({:.0}/{:.0}) | {:.1} | {:.1} | {:.1} | {:.0} |",
            row.label,
            cost.objects,
            cost.wall_ms,
            cost.cpu_ms,
            cost.user_ms,
            cost.sys_ms,
            cost.peak_rss_delta_mib,
            cost.allocated_mib,
            cost.live_mib,
            cost.objects_per_second()
        );
    }
    out
}

/// The ratios the issue sets targets on, for one dataset. Missing rows print as "n/a".
pub fn ratios(rows: &[Row], subject: &str) -> String {
    let find = |label: &str| {
        rows.iter()
            .find(|row| row.label == label)
            .map(|row| &row.cost)
    };
    let Some(ours) = find(subject) else {
        return format!("\n(no `{subject}` row: no ratios)\n");
    };
    let ratio = |num: f64, den: Option<f64>| match den {
        Some(den) if den > 0.0 => format!("{:.2}x", num / den),
        _ => "n/a".to_owned(),
    };
    let kube = find("kube-rs");
    let floor = find("floor");
    let raw = find("raw");
    let mut out = String::new();
    let _ = writeln!(out, "\n| ratio ({subject}) | value | target |");
    let _ = writeln!(out, "|---|---:|---:|");
    let mut line = |name: &str, value: String, target: &str| {
        let _ = writeln!(out, "| {name} | {value} | {target} |");
    };
    line(
        "CPU / floor CPU",
        ratio(ours.cpu_ms, floor.map(|c| c.cpu_ms)),
        "≤1.2x",
    );
    line(
        "CPU / kube-rs CPU",
        ratio(ours.cpu_ms, kube.map(|c| c.cpu_ms)),
        "≤0.8x",
    );
    line(
        "peak RSS Δ / kube-rs",
        ratio(ours.peak_rss_delta_mib, kube.map(|c| c.peak_rss_delta_mib)),
        "≤0.8x",
    );
    line(
        "peak RSS Δ / decoded heap (floor live)",
        ratio(ours.peak_rss_delta_mib, floor.map(|c| c.live_mib)),
        "≤1.2x",
    );
    line(
        "wall / raw wall",
        ratio(ours.wall_ms, raw.map(|c| c.wall_ms)),
        "≤1.15x",
    );
    line(
        "allocated / kube-rs allocated",
        ratio(ours.allocated_mib, kube.map(|c| c.allocated_mib)),
        "-",
    );
    out
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
                peak_rss_delta_mib: 8.0,
                live_mib: 4.0,
                ..Cost::default()
            },
        }
    }

    #[test]
    fn ratios_divide_subject_by_baselines() {
        let rows = [
            row("kubegen", 60.0),
            row("kube-rs", 120.0),
            row("floor", 50.0),
        ];
        let text = ratios(&rows, "kubegen");
        assert!(
            text.contains("| CPU / floor CPU | 1.20x | ≤1.2x |"),
            "{text}"
        );
        assert!(
            text.contains("| CPU / kube-rs CPU | 0.50x | ≤0.8x |"),
            "{text}"
        );
        assert!(
            text.contains("| peak RSS Δ / decoded heap (floor live) | 2.00x |"),
            "{text}"
        );
        assert!(text.contains("| wall / raw wall | n/a |"), "{text}");
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
