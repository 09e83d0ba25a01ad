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

/// One table of the ratios the issue sets targets on, a line per client row (every row but the
/// floors): CPU against the cheaper kube-rs variant and against the decode floor, peak RSS against
/// the decoded heap (the floor's live bytes; whole objects, so not for metadata-only rows), wall
/// time against the raw transfer, and for metadata-only rows, peak RSS against the full kubegen
/// informer's. A missing baseline prints
/// "n/a".
pub fn ratios(rows: &[Row]) -> String {
    let find = |label: &str| {
        rows.iter()
            .find(|row| row.label == label)
            .map(|row| &row.cost)
    };
    let kube_cpu = rows
        .iter()
        .filter(|row| row.label == "kube-rs" || row.label == "kube-rs-any")
        .map(|row| row.cost.cpu_ms)
        .reduce(f64::min);
    let floor = find("floor");
    let raw = find("raw");
    let full = find("kubegen");
    let ratio = |num: f64, den: Option<f64>| match den {
        Some(den) if den > 0.0 => format!("{:.2}x", num / den),
        _ => "n/a".to_owned(),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n| client | CPU / cheaper kube-rs (≤0.6x) | CPU / decode floor | peak RSS / decoded heap (≤1.15x) | wall / raw transfer (≤1.2x) | peak RSS / kubegen's (metadata ≤0.25x) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
    for row in rows
        .iter()
        .filter(|row| row.label != "floor" && row.label != "raw")
    {
        let cost = &row.cost;
        // The floor decodes whole objects: a metadata cache is compared with the full informer.
        let (versus_heap, versus_full) = if row.label.contains("metadata") {
            let full_rss = full.map(|c| c.peak_rss_delta_mib);
            ("-".to_owned(), ratio(cost.peak_rss_delta_mib, full_rss))
        } else {
            let heap = ratio(cost.peak_rss_delta_mib, floor.map(|c| c.live_mib));
            (heap, "-".to_owned())
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            row.label,
            ratio(cost.cpu_ms, kube_cpu),
            ratio(cost.cpu_ms, floor.map(|c| c.cpu_ms)),
            versus_heap,
            ratio(cost.wall_ms, raw.map(|c| c.wall_ms)),
            versus_full,
        );
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
                peak_rss_delta_mib: 8.0,
                live_mib: 4.0,
                ..Cost::default()
            },
        }
    }

    #[test]
    fn ratios_divide_each_client_by_the_cheaper_kube_rs_and_the_floors() {
        let rows = [
            row("kubegen", 60.0),
            row("kube-rs", 120.0),
            row("kube-rs-any", 100.0),
            row("floor", 50.0),
            row("kubegen-metadata", 20.0),
        ];
        let text = ratios(&rows);
        assert!(
            text.contains("| kubegen | 0.60x | 1.20x | 2.00x | n/a | - |"),
            "{text}"
        );
        assert!(
            text.contains("| kubegen-metadata | 0.20x | 0.40x | - | n/a | 1.00x |"),
            "{text}"
        );
        assert!(!text.contains("| floor |"), "{text}");
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
