//! `Elo`: a rating with its 95% interval, the one shape in which every file and report of the
//! lab states a strength.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An Elo rating (random play = 0 on the lab's minimax ladder) with its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Elo {
    /// The maximum-likelihood rating.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low95: f64,
    /// Upper end of the 95% interval.
    pub high95: f64,
}

impl Elo {
    /// Half the width of the interval.
    pub fn half_width(&self) -> f64 {
        0.5 * (self.high95 - self.low95)
    }
}

impl std::fmt::Display for Elo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.0} [{:.0}, {:.0}]", self.elo, self.low95, self.high95)
    }
}

/// Serde adapter for `Option<Elo>` stored as the array `[elo, low95, high95]` (or `null`), the
/// form of a checkpoint's `eval.json`.
pub mod as_triple {
    use super::*;

    /// Writes `Some(elo)` as `[elo, low95, high95]` and `None` as `null`.
    ///
    /// # Errors
    /// Only the serializer's own.
    pub fn serialize<S: Serializer>(elo: &Option<Elo>, s: S) -> Result<S::Ok, S::Error> {
        elo.map(|e| [e.elo, e.low95, e.high95]).serialize(s)
    }

    /// Reads `[elo, low95, high95]` or `null`.
    ///
    /// # Errors
    /// If the value is neither.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Elo>, D::Error> {
        let triple = Option::<[f64; 3]>::deserialize(d)?;
        Ok(triple.map(|[elo, low95, high95]| Elo { elo, low95, high95 }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Holder {
        #[serde(with = "as_triple")]
        elo: Option<Elo>,
    }

    #[test]
    fn triples_round_trip() {
        let h = Holder { elo: Some(Elo { elo: 1200.0, low95: 1100.0, high95: 1300.0 }) };
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(json, r#"{"elo":[1200.0,1100.0,1300.0]}"#);
        assert_eq!(serde_json::from_str::<Holder>(&json).unwrap(), h);
        assert_eq!(serde_json::from_str::<Holder>(r#"{"elo":null}"#).unwrap(), Holder { elo: None });
        assert_eq!(h.elo.unwrap().to_string(), "1200 [1100, 1300]");
    }
}
