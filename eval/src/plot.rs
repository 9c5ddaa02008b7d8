//! The strength curve: Elo with 95% intervals of rated checkpoints against training time or
//! steps, drawn as a PNG with the minimax ladder's levels for reference.

use std::fs;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::register_font;

use crate::elo::EloTable;

/// The font the plot's text is drawn with (DejaVu Sans Mono, see `data/fonts/DejaVu-LICENSE.txt`).
const FONT: &[u8] = include_bytes!("../data/fonts/DejaVuSansMono.ttf");
/// The calibrated ladder (random and minimax depths 1–6, standard rules).
const LADDER: &str = include_str!("../data/ladder.json");

/// One rated network.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedPoint {
    /// Where it came from (a checkpoint or model directory).
    pub source: PathBuf,
    /// Optimizer steps of training.
    pub step: u64,
    /// Hours of training (wall time).
    pub hours: f64,
    /// The rating.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low95: f64,
    /// Upper end of the 95% interval.
    pub high95: f64,
}

/// What the x axis shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XAxis {
    /// Hours of training.
    Hours,
    /// Optimizer steps.
    Steps,
}

fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not valid JSON: {e}", path.display()))
}

/// Step and training hours of a checkpoint directory (from its `meta.json`), or of an exported
/// model (its `model.json` step, and the hours of the checkpoint it came from if that is still
/// there).
fn checkpoint_time(dir: &Path) -> Result<(u64, f64), String> {
    if !dir.join("meta.json").exists() && dir.join("model.json").exists() {
        let card = read_json(&dir.join("model.json"))?;
        let step =
            card["step"].as_u64().ok_or_else(|| format!("{}: no step", dir.join("model.json").display()))?;
        let source = card["source"].as_str().map(PathBuf::from);
        let hours = source.and_then(|s| checkpoint_time(&s).ok()).map_or(f64::NAN, |t| t.1);
        return Ok((step, hours));
    }
    let meta = read_json(&dir.join("meta.json"))?;
    let step =
        meta["step"].as_u64().ok_or_else(|| format!("{}: no step", dir.join("meta.json").display()))?;
    let secs = meta["wall_time_s"].as_f64().unwrap_or(0.0);
    Ok((step, secs / 3600.0))
}

/// The checkpoints of a run that were evaluated during training (their `eval.json`).
///
/// # Errors
/// If the run has no checkpoints directory, or a file is unreadable.
pub fn points_from_run(run: &Path) -> Result<Vec<RatedPoint>, String> {
    let dir = run.join("checkpoints");
    let entries = fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut points = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let eval = path.join("eval.json");
        if !eval.is_file() {
            continue;
        }
        let v = read_json(&eval)?;
        let Some(elo) = v["elo"].as_array().filter(|a| a.len() == 3) else { continue };
        let (step, hours) = checkpoint_time(&path)?;
        let num = |i: usize| elo[i].as_f64().unwrap_or(f64::NAN);
        points.push(RatedPoint { source: path, step, hours, elo: num(0), low95: num(1), high95: num(2) });
    }
    points.sort_by_key(|p| p.step);
    Ok(points)
}

/// The networks in a ratings file written by `eval rate --json`: players named
/// `az:model=DIR,...` whose `DIR` is a checkpoint (with `meta.json`).
///
/// # Errors
/// If the file is unreadable or not a ratings table.
pub fn points_from_ratings(path: &Path) -> Result<Vec<RatedPoint>, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let table: EloTable = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not an `eval rate --json` table: {e}", path.display()))?;
    let mut points = Vec::new();
    for r in &table.ratings {
        let Some(rest) = r.name.strip_prefix("az:") else { continue };
        let Some(dir) = rest.split(',').find_map(|kv| kv.strip_prefix("model=")) else { continue };
        let dir = PathBuf::from(dir);
        let (step, hours) = checkpoint_time(&dir)?;
        points.push(RatedPoint { source: dir, step, hours, elo: r.elo, low95: r.lower95, high95: r.upper95 });
    }
    points.sort_by_key(|p| p.step);
    Ok(points)
}

/// The ladder's minimax levels: `(name, elo)`.
fn ladder_levels() -> Vec<(String, f64)> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(LADDER) else { return Vec::new() };
    let mut out: Vec<(String, f64)> = v["players"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let name = p["name"].as_str()?;
            let depth = name.strip_prefix("minimax:depth=")?;
            Some((format!("minimax d{depth}"), p["elo"].as_f64()?))
        })
        .collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

/// Draws the points (Elo with 95% error bars) against `x`, with the minimax ladder as
/// horizontal reference lines, into a `width × height` PNG at `out`.
///
/// # Errors
/// If there is nothing to plot or the image cannot be written.
pub fn draw(points: &[RatedPoint], x: XAxis, title: &str, out: &Path) -> Result<(), String> {
    // Exported models whose checkpoint is gone have no training time.
    let points: Vec<RatedPoint> =
        points.iter().filter(|p| x == XAxis::Steps || p.hours.is_finite()).cloned().collect();
    let points = &points[..];
    if points.is_empty() {
        return Err(
            "nothing to plot: no rated checkpoints (with a known training time, for --x hours)".into()
        );
    }
    register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| "the embedded font is unreadable".to_string())?;
    let xs: Vec<f64> =
        points.iter().map(|p| if x == XAxis::Hours { p.hours } else { p.step as f64 }).collect();
    let levels = ladder_levels();
    let x_max = xs.iter().copied().fold(0.0, f64::max).max(1e-9) * 1.05;
    let lo = points.iter().map(|p| p.low95).fold(f64::INFINITY, f64::min) - 100.0;
    let hi =
        points.iter().map(|p| p.high95).chain(levels.iter().map(|l| l.1)).fold(f64::NEG_INFINITY, f64::max)
            + 100.0;
    let err = |e: &dyn std::fmt::Display| format!("cannot draw {}: {e}", out.display());
    let root = BitMapBackend::new(out, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, lo..hi)
        .map_err(|e| err(&e))?;
    let x_desc = if x == XAxis::Hours { "training time (hours)" } else { "optimizer steps" };
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("Elo (random = 0)")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .x_label_formatter(&|v| if x == XAxis::Hours { format!("{v:.2}") } else { format!("{v:.0}") })
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| err(&e))?;
    let grey = RGBColor(150, 150, 150);
    for (name, elo) in levels.iter().filter(|l| l.1 > lo && l.1 < hi) {
        chart
            .draw_series(LineSeries::new([(0.0, *elo), (x_max, *elo)], grey.stroke_width(1)))
            .map_err(|e| err(&e))?;
        chart
            .draw_series([Text::new(
                format!("{name} ({elo:.0})"),
                (x_max * 0.01, *elo + 8.0),
                ("sans-serif", 13),
            )])
            .map_err(|e| err(&e))?;
    }
    let blue = RGBColor(31, 119, 180);
    chart
        .draw_series(
            points
                .iter()
                .zip(&xs)
                .map(|(p, &x)| ErrorBar::new_vertical(x, p.low95, p.elo, p.high95, blue.filled(), 6)),
        )
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(points.iter().zip(&xs).map(|(p, &x)| (x, p.elo)), blue.stroke_width(2)))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(points.iter().zip(&xs).map(|(p, &x)| Circle::new((x, p.elo), 4, blue.filled())))
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// The points as a Markdown table (step, hours, Elo, interval, source).
pub fn table(points: &[RatedPoint]) -> String {
    let mut s = String::from("| step | hours | Elo | 95% interval | checkpoint |\n|---|---|---|---|---|\n");
    for p in points {
        s.push_str(&format!(
            "| {} | {:.2} | {:.0} | [{:.0}, {:.0}] | {} |\n",
            p.step,
            p.hours,
            p.elo,
            p.low95,
            p.high95,
            p.source.display()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_a_png_with_the_ladder() {
        let dir = std::env::temp_dir().join(format!("morris-plot-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let points: Vec<RatedPoint> = (1..=5)
            .map(|i| RatedPoint {
                source: dir.join(format!("step-{}", i * 1000)),
                step: i * 1000,
                hours: i as f64 * 0.3,
                elo: 600.0 + 150.0 * i as f64,
                low95: 500.0 + 150.0 * i as f64,
                high95: 700.0 + 150.0 * i as f64,
            })
            .collect();
        let out = dir.join("elo.png");
        draw(&points, XAxis::Hours, "test", &out).unwrap();
        let bytes = fs::read(&out).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert!(bytes.len() > 5_000, "{} bytes", bytes.len());
        assert_eq!(ladder_levels().len(), 6);
        assert!(table(&points).contains("| 3000 | 0.90 | 1050 | [950, 1150] |"));
        assert!(draw(&[], XAxis::Steps, "empty", &out).is_err());
        let _ = fs::remove_dir_all(&dir);
    }
}
