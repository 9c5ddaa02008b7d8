//! The strength curves: Elo with 95% intervals of rated checkpoints against training time or
//! steps (with the minimax ladder's levels for reference), or of time-limited players against
//! their time per move, drawn as PNGs.

use std::path::{Path, PathBuf};

use morris_train::store::{MODEL_CARD_FILE, ModelCard, checkpoint};
use morris_train::{Elo, TrainError};
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::register_font;

use crate::error::{EvalError, Result};
use crate::ladder::Ladder;
use crate::records::read_ratings;

/// The font the plot's text is drawn with (DejaVu Sans Mono, see `data/fonts/DejaVu-LICENSE.txt`).
const FONT: &[u8] = include_bytes!("../data/fonts/DejaVuSansMono.ttf");

/// One rated network.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedPoint {
    /// Where it came from (a checkpoint or model directory).
    pub source: PathBuf,
    /// Optimizer steps of training.
    pub step: u64,
    /// Hours of training (wall time; NaN when unknown).
    pub hours: f64,
    /// The rating with its 95% interval.
    pub elo: Elo,
}

/// What the x axis shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XAxis {
    /// Hours of training.
    Hours,
    /// Optimizer steps.
    Steps,
}

/// Step and training hours of a checkpoint directory (from its `meta.json`), or of an exported
/// model (its model card's step, and the hours its card records or, for an older card, those of
/// the checkpoint it came from if that is still there).
fn checkpoint_time(dir: &Path) -> Result<(u64, f64)> {
    if !dir.join(checkpoint::META_FILE).exists() && dir.join(MODEL_CARD_FILE).exists() {
        let card = ModelCard::read(dir)?;
        let hours = match &card.training {
            Some(training) => training.wall_time_s / 3600.0,
            None => checkpoint_time(Path::new(&card.source)).map_or(f64::NAN, |t| t.1),
        };
        return Ok((card.step, hours));
    }
    let meta = checkpoint::read_meta(dir)?;
    Ok((meta.step, meta.wall_time_s / 3600.0))
}

/// The checkpoints of a run that were evaluated during training (their `eval.json`).
///
/// # Errors
/// If the run has no checkpoints directory, or a file is unreadable or malformed.
pub fn points_from_run(run: &Path) -> Result<Vec<RatedPoint>> {
    let dir = run.join("checkpoints");
    if !dir.is_dir() {
        return Err(EvalError::Train(TrainError::NotFound {
            what: "checkpoints directory",
            path: dir,
            hint: "is this a run directory?".into(),
        }));
    }
    let mut points = Vec::new();
    for (_, path) in checkpoint::list(&dir) {
        let Some(eval) = checkpoint::read_eval(&path)? else { continue };
        let Some(elo) = eval.elo else { continue };
        let (step, hours) = checkpoint_time(&path)?;
        points.push(RatedPoint { source: path, step, hours, elo });
    }
    points.sort_by_key(|p| p.step);
    Ok(points)
}

/// The networks in a ratings file written by `eval rate --json`: players named
/// `az:model=DIR,...` whose `DIR` is a checkpoint (with `meta.json`) or an exported model.
///
/// # Errors
/// If the file is unreadable or not a ratings table.
pub fn points_from_ratings(path: &Path) -> Result<Vec<RatedPoint>> {
    let table = read_ratings(path)?;
    let mut points = Vec::new();
    for r in &table.ratings {
        let Some(rest) = r.name.strip_prefix("az:") else { continue };
        let Some(dir) = rest.split(',').find_map(|kv| kv.strip_prefix("model=")) else { continue };
        let dir = PathBuf::from(dir);
        let (step, hours) = checkpoint_time(&dir)?;
        points.push(RatedPoint { source: dir, step, hours, elo: r.elo });
    }
    points.sort_by_key(|p| p.step);
    Ok(points)
}

/// Draws the points (Elo with 95% error bars) against `x`, with the minimax ladder as
/// horizontal reference lines, into a `width × height` PNG at `out`.
///
/// # Errors
/// If there is nothing to plot or the image cannot be written.
pub fn draw(points: &[RatedPoint], x: XAxis, title: &str, out: &Path) -> Result<()> {
    // Exported models whose checkpoint is gone have no training time.
    let points: Vec<RatedPoint> =
        points.iter().filter(|p| x == XAxis::Steps || p.hours.is_finite()).cloned().collect();
    let points = &points[..];
    if points.is_empty() {
        return Err(EvalError::Nothing(
            "nothing to plot: no rated checkpoints (with a known training time, for --x hours)".into(),
        ));
    }
    register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| EvalError::Internal("the embedded font is unreadable".into()))?;
    let xs: Vec<f64> =
        points.iter().map(|p| if x == XAxis::Hours { p.hours } else { p.step as f64 }).collect();
    let levels = Ladder::calibrated().minimax_levels();
    let x_max = xs.iter().copied().fold(0.0, f64::max).max(1e-9) * 1.05;
    let lo = points.iter().map(|p| p.elo.low95).fold(f64::INFINITY, f64::min) - 100.0;
    let hi = points
        .iter()
        .map(|p| p.elo.high95)
        .chain(levels.iter().map(|l| l.1))
        .fold(f64::NEG_INFINITY, f64::max)
        + 100.0;
    let err = |e: &dyn std::fmt::Display| EvalError::Corrupt {
        path: out.to_path_buf(),
        reason: format!("cannot draw: {e}"),
    };
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
            points.iter().zip(&xs).map(|(p, &x)| {
                ErrorBar::new_vertical(x, p.elo.low95, p.elo.elo, p.elo.high95, blue.filled(), 6)
            }),
        )
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(
            points.iter().zip(&xs).map(|(p, &x)| (x, p.elo.elo)),
            blue.stroke_width(2),
        ))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(points.iter().zip(&xs).map(|(p, &x)| Circle::new((x, p.elo.elo), 4, blue.filled())))
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// One player at one time per move, from a ratings table.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedPoint {
    /// The player's spec without its `time=` option (the series it belongs to).
    pub series: String,
    /// The time per move, in milliseconds.
    pub ms: f64,
    /// The rating with its 95% interval.
    pub elo: Elo,
}

/// The players of a ratings file (`eval rate --json`) whose spec has a `time=Tms` option, as
/// points of series (the spec without the option), and the name of the anchor (the player
/// with no error).
///
/// # Errors
/// If the file is unreadable or not a ratings table.
pub fn timed_points_from_ratings(path: &Path) -> Result<(Vec<TimedPoint>, Option<String>)> {
    let table = read_ratings(path)?;
    let anchor = table.ratings.iter().find(|r| r.std_error == 0.0).map(|r| r.name.clone());
    let mut points = Vec::new();
    for r in &table.ratings {
        let Some((kind, options)) = r.name.split_once(':') else { continue };
        let mut ms = None;
        let rest: Vec<&str> = options
            .split(',')
            .filter(|kv| match kv.strip_prefix("time=").and_then(|t| t.strip_suffix("ms")) {
                Some(t) => {
                    ms = t.parse::<f64>().ok();
                    false
                }
                None => true,
            })
            .collect();
        let Some(ms) = ms.filter(|m| *m > 0.0) else { continue };
        let series = if rest.is_empty() { kind.to_string() } else { format!("{kind}:{}", rest.join(",")) };
        points.push(TimedPoint { series, ms, elo: r.elo });
    }
    points.sort_by(|a, b| a.series.cmp(&b.series).then(a.ms.total_cmp(&b.ms)));
    Ok((points, anchor))
}

/// Draws each series of `points` (Elo with 95% error bars) against the time per move on a
/// logarithmic axis into a PNG at `out`; `anchor` names the player at 0 for the axis label.
///
/// # Errors
/// If there is nothing to plot or the image cannot be written.
pub fn draw_by_time(points: &[TimedPoint], anchor: Option<&str>, title: &str, out: &Path) -> Result<()> {
    if points.is_empty() {
        return Err(EvalError::Nothing(
            "nothing to plot: no player with a time=Tms option in the ratings".into(),
        ));
    }
    register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| EvalError::Internal("the embedded font is unreadable".into()))?;
    let err = |e: &dyn std::fmt::Display| EvalError::Corrupt {
        path: out.to_path_buf(),
        reason: format!("cannot draw: {e}"),
    };
    let x_lo = points.iter().map(|p| p.ms).fold(f64::INFINITY, f64::min) / 1.5;
    let x_hi = points.iter().map(|p| p.ms).fold(0.0, f64::max) * 1.5;
    let lo = points.iter().map(|p| p.elo.low95).fold(f64::INFINITY, f64::min) - 50.0;
    let hi = points.iter().map(|p| p.elo.high95).fold(f64::NEG_INFINITY, f64::max) + 50.0;
    let root = BitMapBackend::new(out, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((x_lo..x_hi).log_scale(), lo..hi)
        .map_err(|e| err(&e))?;
    let y_desc = match anchor {
        Some(a) => format!("Elo ({a} = 0)"),
        None => "Elo".to_string(),
    };
    chart
        .configure_mesh()
        .x_desc("time per move (ms, log scale)")
        .y_desc(y_desc)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| err(&e))?;
    let colours =
        [RGBColor(31, 119, 180), RGBColor(214, 39, 40), RGBColor(44, 160, 44), RGBColor(148, 103, 189)];
    let mut names: Vec<&str> = points.iter().map(|p| p.series.as_str()).collect();
    names.dedup();
    for (i, name) in names.iter().enumerate() {
        let colour = colours[i % colours.len()];
        let series: Vec<&TimedPoint> = points.iter().filter(|p| p.series == *name).collect();
        chart
            .draw_series(series.iter().map(|p| {
                ErrorBar::new_vertical(p.ms, p.elo.low95, p.elo.elo, p.elo.high95, colour.filled(), 8)
            }))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(LineSeries::new(series.iter().map(|p| (p.ms, p.elo.elo)), colour.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name.to_string())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        chart
            .draw_series(series.iter().map(|p| Circle::new((p.ms, p.elo.elo), 4, colour.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// The timed points as a Markdown table (series, ms per move, Elo, interval).
pub fn timed_table(points: &[TimedPoint]) -> String {
    let mut s = String::from("| player | ms/move | Elo | 95% interval |\n|---|---|---|---|\n");
    for p in points {
        s.push_str(&format!(
            "| {} | {:.0} | {:.0} | [{:.0}, {:.0}] |\n",
            p.series, p.ms, p.elo.elo, p.elo.low95, p.elo.high95
        ));
    }
    s
}

/// The points as a Markdown table (step, hours, Elo, interval, source).
pub fn table(points: &[RatedPoint]) -> String {
    let mut s = String::from("| step | hours | Elo | 95% interval | checkpoint |\n|---|---|---|---|---|\n");
    for p in points {
        s.push_str(&format!(
            "| {} | {:.2} | {:.0} | [{:.0}, {:.0}] | {} |\n",
            p.step,
            p.hours,
            p.elo.elo,
            p.elo.low95,
            p.elo.high95,
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
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let points: Vec<RatedPoint> = (1..=5)
            .map(|i| RatedPoint {
                source: dir.join(format!("step-{}", i * 1000)),
                step: i * 1000,
                hours: i as f64 * 0.3,
                elo: Elo {
                    elo: 600.0 + 150.0 * i as f64,
                    low95: 500.0 + 150.0 * i as f64,
                    high95: 700.0 + 150.0 * i as f64,
                },
            })
            .collect();
        let out = dir.join("elo.png");
        draw(&points, XAxis::Hours, "test", &out).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert!(bytes.len() > 5_000, "{} bytes", bytes.len());
        assert!(table(&points).contains("| 3000 | 0.90 | 1050 | [950, 1150] |"));
        assert!(matches!(draw(&[], XAxis::Steps, "empty", &out), Err(EvalError::Nothing(_))));
    }

    #[test]
    fn reads_timed_players_and_draws_them_on_a_log_axis() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let rating = |name: &str, elo: f64, se: f64| {
            serde_json::json!({"name": name, "elo": elo, "lower95": elo - 2.0 * se, "upper95": elo + 2.0 * se,
                "std_error": se, "games": 100, "points": 50.0, "score_fraction": 0.5})
        };
        let table = serde_json::json!({
            "ratings": [
                rating("minimax:time=20ms", 0.0, 0.0),
                rating("minimax:time=100ms", 80.0, 30.0),
                rating("az:model=m,time=20ms,batch=8", 200.0, 40.0),
                rating("az:model=m,time=100ms,batch=8", 260.0, 50.0),
                rating("minimax:depth=3", -300.0, 60.0),
            ],
            "covariance": [], "los": [], "iterations": 3
        });
        let path = dir.join("ratings.json");
        std::fs::write(&path, table.to_string()).unwrap();
        let (points, anchor) = timed_points_from_ratings(&path).unwrap();
        assert_eq!(anchor.as_deref(), Some("minimax:time=20ms"));
        assert_eq!(points.len(), 4, "the depth-limited player has no time");
        assert_eq!((points[0].series.as_str(), points[0].ms), ("az:model=m,batch=8", 20.0));
        assert_eq!((points[3].series.as_str(), points[3].ms), ("minimax", 100.0));
        let out = dir.join("time.png");
        draw_by_time(&points, anchor.as_deref(), "test", &out).unwrap();
        assert_eq!(&std::fs::read(&out).unwrap()[1..4], b"PNG");
        assert!(timed_table(&points).contains("| minimax | 100 | 80 | [20, 140] |"));
        assert!(matches!(draw_by_time(&[], None, "empty", &out), Err(EvalError::Nothing(_))));
    }
}
