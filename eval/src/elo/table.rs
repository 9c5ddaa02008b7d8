//! Output of a fitted Elo table: text, CSV, the likelihood-of-superiority matrix, lookups.

use super::{EloTable, Rating, Z95};

/// Quotes a CSV field if it needs it (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

impl EloTable {
    /// Player indices sorted by Elo, strongest first (ties keep the input order).
    pub fn order_by_elo(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.ratings.len()).collect();
        order.sort_by(|&a, &b| self.ratings[b].elo.elo.total_cmp(&self.ratings[a].elo.elo));
        order
    }

    /// An aligned text table sorted by Elo descending: rank, name, Elo, ± (half-width of the
    /// 95% confidence interval), [lower, upper], games and score percentage.
    pub fn to_text(&self) -> String {
        let name_width = self.ratings.iter().map(|r| r.name.chars().count()).max().unwrap_or(0).max(4);
        let mut out = format!(
            "{:>4}  {:<name_width$}  {:>8}  {:>6}  {:>21}  {:>7}  {:>6}\n",
            "Rank", "Name", "Elo", "±", "95% interval", "Games", "Score"
        );
        for (rank, &i) in self.order_by_elo().iter().enumerate() {
            let r = &self.ratings[i];
            let interval = format!("[{:.1}, {:.1}]", r.elo.low95, r.elo.high95);
            out.push_str(&format!(
                "{:>4}  {:<name_width$}  {:>8.1}  {:>6.1}  {:>21}  {:>7}  {:>5.1}%\n",
                rank + 1,
                r.name,
                r.elo.elo,
                Z95 * r.std_error,
                interval,
                r.games,
                100.0 * r.score_fraction
            ));
        }
        out
    }

    /// The ratings as CSV (players in the table's order), with the header
    /// `name,elo,std_error,lower95,upper95,games,points,score`; `score` is the score fraction.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("name,elo,std_error,lower95,upper95,games,points,score\n");
        for r in &self.ratings {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{}\n",
                csv_field(&r.name),
                r.elo.elo,
                r.std_error,
                r.elo.low95,
                r.elo.high95,
                r.games,
                r.points,
                r.score_fraction
            ));
        }
        out
    }

    /// The likelihood-of-superiority matrix as text: players sorted by Elo (strongest first),
    /// entry in row `i`, column `j` = chance in percent that `i` is stronger than `j`.
    pub fn los_text(&self) -> String {
        let order = self.order_by_elo();
        let name_width = self.ratings.iter().map(|r| r.name.chars().count()).max().unwrap_or(0).max(3);
        let col_width = name_width.max(6);
        let mut out = format!("{:<name_width$}", "LOS");
        for &j in &order {
            out.push_str(&format!("  {:>col_width$}", self.ratings[j].name));
        }
        out.push('\n');
        for &i in &order {
            out.push_str(&format!("{:<name_width$}", self.ratings[i].name));
            for &j in &order {
                let cell = if i == j {
                    "-".to_string()
                } else {
                    let p = self.los.get(i).and_then(|row| row.get(j)).copied().unwrap_or(f64::NAN);
                    format!("{:.1}%", 100.0 * p)
                };
                out.push_str(&format!("  {cell:>col_width$}"));
            }
            out.push('\n');
        }
        out
    }

    /// The rating of the (first) player called `name`.
    pub fn get(&self, name: &str) -> Option<&Rating> {
        self.ratings.iter().find(|r| r.name == name)
    }
}
