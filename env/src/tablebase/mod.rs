//! Endgame tablebases: exact values of every moving- and flying-phase position with up to 9
//! pieces a side, built by retrograde analysis, stored per sector and probed by search.
//!
//! # Scope and values
//!
//! A *sector* `AvB` holds the positions where both hands are empty, the player to move has `A`
//! pieces on the board and the opponent `B` (3 ≤ A, B), with no removal pending; a pending
//! removal is probed through the positions it can lead to. Each class of positions under the
//! 16 board symmetries is stored once, and the colour swap is used throughout: values are for
//! the player to move, whoever that is.
//!
//! A slot stores win, draw or loss and, for a decided position, the distance in plies to the
//! next removal (or to the end of the game) with best play: the fewest the winner needs while
//! keeping the win, the most the loser can delay. This is the *distance to zeroing* of chess
//! tablebases, and it lets a prober respect the N-move rule exactly: with `c` plies already on
//! the counter, a stored win in `d` is a win if `c + d ≤ N` and a draw otherwise (likewise a
//! loss). Wins that only exist beyond the rule (a later stretch needing more than N plies) are
//! stored as draws, since the builder classifies the positions after each removal with a fresh
//! counter.
//!
//! What is and is not accounted for:
//! * flying and the N-move rule: yes (the files record both; a table only serves the same rules);
//! * threefold repetition: a stored win is also a win with the repetition rule, because a
//!   winner who always lowers the distance never repeats a position; draws and losses are
//!   unaffected;
//! * the turn cap: no (a table win may need more turns than a cap leaves);
//! * the placing phase: not stored (a table position has both hands empty); [`Placement`]
//!   solves positions with pieces in hand exactly by search on top of the tables.
//!
//! # Example
//!
//! ```
//! use morris_env::tablebase::{self, Tablebase, Wdl};
//! use morris_env::{Game, Rules};
//! let dir = std::env::temp_dir().join(format!("doc-tb-{}", std::process::id()));
//! tablebase::build(&dir, 3, &Rules::standard(), &|_| {}).unwrap();
//! let tb = Tablebase::open(&dir).unwrap();
//! let game = Game::from_position(Rules::standard(), tablebase::position_from_points("a7 d7 a4", "g1 f2 e3", morris_env::Color::White).unwrap());
//! let probe = tb.probe(game.position()).unwrap();
//! assert!(matches!(probe.wdl, Wdl::Win | Wdl::Draw | Wdl::Loss));
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

mod accuracy;
mod build;
mod check;
mod entry;
mod error;
mod file;
mod index;
mod judged;
mod perfect;
mod placement;
mod solve;
mod whole;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// The rules positions in the tables move under: nine men's morris's (the draw rules aside,
/// which the files record and [`Tablebase::check_rules`] checks).
pub(crate) const NINE: Rules = Rules::standard();

pub use accuracy::{Accuracy, PhaseAccuracy, measure, random_placement_position, wilson};
pub use build::{BuildEvent, SectorSummary, build};
pub use check::{Mismatch, SectorCheck};
pub use entry::{Probe, Wdl};
pub use error::TablebaseError;
pub use index::Indexer;
pub use judged::{JudgedError, JudgedHeader, JudgedPosition, JudgedSet, legal_turns, measure_judged};
pub use perfect::{PerfectPlayer, Pick};
pub use placement::{Placement, PlacementStats};
pub use whole::{Solved, WholeGame, WholeGameSummary, position_key};

use crate::action::Action;
use crate::position::Position;
use crate::rules::Rules;
use crate::types::{BitBoard, Color};

/// A tablebase opened for probing: every sector file of a directory, memory-mapped (see
/// [`Tablebase::open`]).
pub struct Tablebase {
    dir: PathBuf,
    ix: Indexer,
    flying: bool,
    n_move_rule: Option<u32>,
    max_side: usize,
    /// `sectors[a][b]`: the mapped file of sector `AvB`, when present.
    sectors: Vec<Vec<Option<file::Mapped>>>,
    /// The transposition table of [`Tablebase::placement`], made on first use.
    placement_tt: std::sync::OnceLock<placement::TransTable>,
}

impl std::fmt::Debug for Tablebase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tablebase").field("dir", &self.dir).field("sectors", &self.sector_names()).finish()
    }
}

impl Tablebase {
    /// Opens every `sector-AvB.tb` in `dir` by mapping it into memory. Each file's header and
    /// size are checked now; its pages are read when a probe first touches them, and the
    /// operating system's page cache shares them between processes and evicts them under
    /// memory pressure, so the full set (about 18 GB) opens at once on a machine with less
    /// memory. [`Tablebase::verify`] reads everything and checks the checksums.
    ///
    /// # Errors
    /// [`TablebaseError::Missing`] if the directory has no sector files, `Corrupt` for a damaged
    /// header or a wrong size, `RulesMismatch` if the files disagree on the rules.
    pub fn open(dir: &Path) -> Result<Tablebase, TablebaseError> {
        let entries = fs::read_dir(dir).map_err(|_| TablebaseError::Missing(dir.to_path_buf()))?;
        let mut files = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(core) = name.strip_prefix("sector-").and_then(|n| n.strip_suffix(".tb")) else {
                continue;
            };
            let Some((a, b)) = core.split_once('v') else { continue };
            if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>())
                && (3..=index::MAX_SIDE).contains(&a)
                && (3..=index::MAX_SIDE).contains(&b)
            {
                files.push((a, b, entry.path()));
            }
        }
        if files.is_empty() {
            return Err(TablebaseError::Missing(dir.to_path_buf()));
        }
        let max_side = files.iter().map(|&(a, b, _)| a.max(b)).max().unwrap_or(3);
        let ix = Indexer::new(max_side);
        let mut sectors: Vec<Vec<Option<file::Mapped>>> =
            (0..=max_side).map(|_| (0..=max_side).map(|_| None).collect()).collect();
        let mut rules: Option<(bool, Option<u32>)> = None;
        for (a, b, path) in files {
            let mapped = file::Mapped::open(&path)?;
            let h = mapped.header();
            if (h.mover as usize, h.opponent as usize) != (a, b) || mapped.len() != ix.len(a, b) {
                return Err(TablebaseError::Corrupt {
                    path,
                    reason: "header does not match the file name".into(),
                });
            }
            match rules {
                None => rules = Some((h.flying, h.n_move_rule)),
                Some((flying, n)) if (flying, n) != (h.flying, h.n_move_rule) => {
                    return Err(TablebaseError::RulesMismatch {
                        path,
                        flying: h.flying,
                        n_move_rule: h.n_move_rule,
                        want_flying: flying,
                        want_n_move_rule: n,
                    });
                }
                Some(_) => {}
            }
            sectors[a][b] = Some(mapped);
        }
        let (flying, n_move_rule) = rules.unwrap_or((true, None));
        Ok(Tablebase {
            dir: dir.to_path_buf(),
            ix,
            flying,
            n_move_rule,
            max_side,
            sectors,
            placement_tt: std::sync::OnceLock::new(),
        })
    }

    /// As [`Tablebase::open`] followed by [`Tablebase::verify`], but shared: every caller in
    /// the process that opens the same directory gets the same tables while any of them holds
    /// it, so the checksums are read once per process (the agents, training and evaluation
    /// open tables this way: a damaged file is named before a game starts).
    ///
    /// # Errors
    /// As [`Tablebase::open`] and [`Tablebase::verify`].
    pub fn open_shared(dir: &Path) -> Result<Arc<Tablebase>, TablebaseError> {
        static CACHE: Mutex<Vec<(PathBuf, Weak<Tablebase>)>> = Mutex::new(Vec::new());
        let key = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        cache.retain(|(_, w)| w.strong_count() > 0);
        if let Some(tb) = cache.iter().find(|(p, _)| *p == key).and_then(|(_, w)| w.upgrade()) {
            return Ok(tb);
        }
        let tb = Tablebase::open(dir)?;
        tb.verify()?;
        let tb = Arc::new(tb);
        cache.push((key, Arc::downgrade(&tb)));
        Ok(tb)
    }

    /// The placement solver every user of these tables shares (agents, matches, accuracy
    /// runs): its transposition table (2^25 entries, 256 MiB, when the tables reach 8 pieces a
    /// side; 2^20, 8 MiB, below) is made on first use and keeps what it proved for the life of
    /// the tables, so later positions and later games are cheaper. [`Placement::new`] makes a
    /// solver with a table of its own size instead.
    pub fn placement(&self) -> Placement<'_> {
        let tt = self
            .placement_tt
            .get_or_init(|| placement::TransTable::new(if self.max_side >= 8 { 25 } else { 20 }));
        Placement::with_table(self, tt)
    }

    /// The exact value of any live position for the player to move: from the tables when
    /// both hands are empty, else by the shared placement solver ([`Tablebase::placement`]).
    ///
    /// # Errors
    /// `NotCovered` for a finished game or a position outside the tables, `MissingSector`
    /// naming a sector the position needs.
    pub fn value(&self, pos: &Position) -> Result<Wdl, TablebaseError> {
        if pos.in_hand(Color::White) == 0 && pos.in_hand(Color::Black) == 0 {
            if pos.outcome(&self.rules()).is_terminal() {
                return Err(TablebaseError::NotCovered("the game is already over".into()));
            }
            return self.require(pos).map(|p| p.wdl);
        }
        self.placement().value(pos)
    }

    /// Whether the tables hold every sector a placement-phase search from the start needs
    /// (every `AvB` with 3 ≤ A, B ≤ 9), so positions with pieces in hand can be solved.
    pub fn covers_placement(&self) -> bool {
        self.max_side == index::MAX_SIDE
            && (3..=index::MAX_SIDE).all(|a| (3..=index::MAX_SIDE).all(|b| self.sectors[a][b].is_some()))
    }

    /// The directory the tables came from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Names of the loaded sectors, such as `["3v3", "4v3", "3v4"]`.
    pub fn sector_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for a in 3..=self.max_side {
            for b in 3..=self.max_side {
                if self.sectors[a][b].is_some() {
                    out.push(format!("{a}v{b}"));
                }
            }
        }
        out
    }

    /// Reads every sector file and checks its checksum, in parallel; returns the bytes read.
    ///
    /// # Errors
    /// [`TablebaseError::Corrupt`] naming the first damaged file.
    pub fn verify(&self) -> Result<u64, TablebaseError> {
        use rayon::prelude::*;
        let files: Vec<&file::Mapped> = self.sectors.iter().flatten().flatten().collect();
        files.par_iter().try_for_each(|m| m.verify())?;
        Ok(files.iter().map(|m| (file::HEADER + 2 * m.len()) as u64).sum())
    }

    /// The error for a position whose sector `AvB` is absent: it names the sector and the
    /// command that builds it.
    fn missing_sector(&self, a: usize, b: usize) -> TablebaseError {
        TablebaseError::MissingSector {
            sector: format!("{a}v{b}"),
            dir: self.dir.clone(),
            max_pieces: a.max(b),
        }
    }

    /// As [`Tablebase::probe`], but a position outside the tables is an error that says why:
    /// pieces in hand, a side below 3 pieces, or the missing sector and how to build it.
    ///
    /// # Errors
    /// [`TablebaseError::NotCovered`] or [`TablebaseError::MissingSector`].
    pub fn require(&self, pos: &Position) -> Result<Probe, TablebaseError> {
        if let Some(p) = self.probe(pos) {
            return Ok(p);
        }
        if pos.in_hand(Color::White) != 0 || pos.in_hand(Color::Black) != 0 {
            return Err(TablebaseError::NotCovered("pieces are still in hand".into()));
        }
        let me = pos.current_player();
        let (a, b) = (pos.pieces(me).count() as usize, pos.pieces(me.opponent()).count() as usize);
        if a < 3 || b < 3 {
            return Err(TablebaseError::NotCovered(format!("{a} against {b} pieces: the game is over")));
        }
        if pos.is_removal_pending() {
            // The removals lead to the sector with one opponent piece fewer, the opponent to move.
            return Err(self.missing_sector(b - 1, a));
        }
        Err(self.missing_sector(a, b))
    }

    /// The rules the tables were built for (no repetition rule or turn cap: see the module docs).
    pub fn rules(&self) -> Rules {
        Rules {
            variant: crate::Variant::Nine,
            flying: self.flying,
            n_move_rule: self.n_move_rule,
            threefold_repetition: false,
            turn_cap: None,
        }
    }

    /// Checks that the tables serve `rules` (same flying and N-move rule).
    ///
    /// # Errors
    /// [`TablebaseError::RulesMismatch`] naming both.
    pub fn check_rules(&self, rules: &Rules) -> Result<(), TablebaseError> {
        if !rules.variant.is_nine() {
            return Err(TablebaseError::Variant { path: self.dir.clone(), variant: rules.variant });
        }
        if rules.flying == self.flying && rules.n_move_rule == self.n_move_rule {
            return Ok(());
        }
        Err(TablebaseError::RulesMismatch {
            path: self.dir.clone(),
            flying: self.flying,
            n_move_rule: self.n_move_rule,
            want_flying: rules.flying,
            want_n_move_rule: rules.n_move_rule,
        })
    }

    fn stored(&self, mover: BitBoard, opp: BitBoard) -> Option<u16> {
        let (a, b) = (mover.count() as usize, opp.count() as usize);
        let table = self.sectors.get(a)?.get(b)?.as_ref()?;
        (a >= 3 && b >= 3).then(|| table.get(self.ix.index(mover.0, opp.0)))
    }

    /// The exact value of `pos` for the player to move, with its N-move counter, or `None` if
    /// the position is outside the loaded sectors (pieces in hand, too many pieces, or a game
    /// already decided by material).
    pub fn probe(&self, pos: &Position) -> Option<Probe> {
        if pos.in_hand(Color::White) != 0 || pos.in_hand(Color::Black) != 0 {
            return None;
        }
        let me = pos.current_player();
        let mover = pos.pieces(me);
        let opp = pos.pieces(me.opponent());
        if mover.count() < 3 || opp.count() < 3 {
            return None;
        }
        if !pos.is_removal_pending() {
            let stored = self.stored(mover, opp)?;
            return Some(entry::read(stored, pos.quiet_plies() as u32, self.n_move_rule));
        }
        // A pending removal: the best of the positions it can lead to, each with a fresh counter.
        if opp.count() == 3 {
            return Some(Probe { wdl: Wdl::Win, plies: 0 });
        }
        let mut best: Option<Wdl> = None;
        for r in pos.removable(&NINE) {
            let stored = self.stored(opp - r.bit(), mover)?;
            let wdl = entry::read(stored, 0, self.n_move_rule).wdl.flip();
            best = Some(best.map_or(wdl, |b| b.max(wdl)));
        }
        best.map(|wdl| Probe { wdl, plies: 0 })
    }

    /// A position drawn uniformly from the classes of the loaded sectors (each sector weighted
    /// by its slots, unused slots redrawn), shown under a random one of the 16 symmetries with a
    /// random colour to move and a fresh N-move counter.
    pub fn random_position(&self, rng: &mut crate::rng::Rng) -> Position {
        let sectors: Vec<(usize, usize, usize)> = (3..=self.max_side)
            .flat_map(|a| (3..=self.max_side).map(move |b| (a, b)))
            .filter_map(|(a, b)| self.sectors[a][b].as_ref().map(|m| (a, b, m.len())))
            .collect();
        let total: u64 = sectors.iter().map(|s| s.2 as u64).sum();
        loop {
            let mut x = ((rng.next_u64() as u128 * total as u128) >> 64) as u64;
            let Some(&(a, b, len)) = sectors.iter().find(|s| {
                let hit = x < s.2 as u64;
                if !hit {
                    x -= s.2 as u64;
                }
                hit
            }) else {
                continue;
            };
            let (mover, opp, canonical) = self.ix.position(a, b, (x as usize).min(len - 1));
            if !canonical {
                continue;
            }
            let s = crate::symmetry::Symmetry::try_index(rng.below(16) as usize)
                .unwrap_or(crate::symmetry::Symmetry::IDENTITY);
            let side = if rng.below(2) == 0 { Color::White } else { Color::Black };
            let (m, o) = (s.board(BitBoard(mover)), s.board(BitBoard(opp)));
            let (white, black) = if side == Color::White { (m, o) } else { (o, m) };
            if let Ok(pos) = Position::from_parts(white, black, [0, 0], side, false) {
                return pos;
            }
        }
    }

    /// The value of each legal action in `pos` for the player making it, best first (see
    /// [`Probe::preference`]), or `None` if `pos` is outside the tables. A move that closes a
    /// mill is valued with its best removal (plies 1: the removal follows at once).
    pub fn moves(&self, pos: &Position) -> Option<Vec<(Action, Probe)>> {
        self.probe(pos)?;
        let rules = self.rules();
        let me = pos.current_player();
        let mut out = Vec::new();
        for a in pos.legal_actions(&rules).iter() {
            let mut child = *pos;
            child.apply_unchecked(a, &rules);
            let value = if let crate::outcome::Outcome::Win { winner, .. } = child.outcome(&rules) {
                let wdl = if winner == me { Wdl::Win } else { Wdl::Loss };
                Probe { wdl, plies: (!pos.is_removal_pending()) as u16 }
            } else if child.current_player() == me {
                let p = self.probe(&child)?;
                Probe { wdl: p.wdl, plies: if pos.is_removal_pending() { 0 } else { 1 } }
            } else {
                let p = self.probe(&child)?;
                let plies = if pos.is_removal_pending() || p.wdl == Wdl::Draw { 0 } else { p.plies + 1 };
                Probe { wdl: p.wdl.flip(), plies }
            };
            out.push((a, value));
        }
        out.sort_by_key(|(a, p)| (std::cmp::Reverse(p.preference()), a.0));
        Some(out)
    }
}

/// A loaded tablebase as a search setting: cheap to clone, equal when loaded from the same
/// directory, and left out of serialized configs (a config names the directory instead).
#[derive(Clone)]
pub struct SharedTablebase(pub Arc<Tablebase>);

impl SharedTablebase {
    /// Opens (or reuses, see [`Tablebase::open_shared`]) the tables in `dir`.
    ///
    /// # Errors
    /// As [`Tablebase::open`].
    pub fn open(dir: &Path) -> Result<SharedTablebase, TablebaseError> {
        Tablebase::open_shared(dir).map(SharedTablebase)
    }
}

impl std::ops::Deref for SharedTablebase {
    type Target = Tablebase;
    fn deref(&self) -> &Tablebase {
        &self.0
    }
}

impl PartialEq for SharedTablebase {
    fn eq(&self, other: &SharedTablebase) -> bool {
        self.0.dir == other.0.dir
    }
}

impl std::fmt::Debug for SharedTablebase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedTablebase({})", self.0.dir.display())
    }
}

impl Tablebase {
    /// A move that keeps the best value of `pos` (the quickest win, the slowest loss, or a
    /// move that keeps a draw), or `None` outside the tables. Among moves that keep a draw,
    /// `prefer` is taken if it is one of them (a search's choice), else one is drawn with `pick`
    /// (called with the number of candidates, returning an index below it); among equally quick
    /// wins or slow losses, likewise.
    pub fn choose(
        &self,
        pos: &Position,
        prefer: Option<Action>,
        pick: impl FnOnce(u32) -> u32,
    ) -> Option<Action> {
        let moves = self.moves(pos)?;
        let best = moves.first()?.1.preference();
        let tied: Vec<Action> =
            moves.iter().take_while(|(_, p)| p.preference() == best).map(|&(a, _)| a).collect();
        if let Some(a) = prefer.filter(|a| tied.contains(a)) {
            return Some(a);
        }
        let i = pick(tied.len() as u32) as usize;
        tied.get(i.min(tied.len().saturating_sub(1))).copied()
    }
}

impl Tablebase {
    /// With pieces in hand, when every position the rest of the placement can reach is inside
    /// the tables (each side's pieces on the board and in hand at most the largest side built:
    /// always, with the full set): `prefer` (a search's choice) if it keeps the position's exact
    /// value, else a seeded random move that does, by the placement solver. `None` otherwise
    /// (no pieces in hand, a side with more pieces than the tables hold, a sector missing), so
    /// the caller keeps its own choice. This is what `tb=` in the `minimax` and `az` agents adds
    /// to their play in the placement phase; self-play does not call it.
    pub fn keep_in_placement(
        &self,
        pos: &Position,
        prefer: Option<Action>,
        rng: &mut crate::rng::Rng,
    ) -> Option<Action> {
        let in_hand = pos.in_hand(Color::White) > 0 || pos.in_hand(Color::Black) > 0;
        let fits = [Color::White, Color::Black]
            .iter()
            .all(|&c| pos.pieces(c).count() as usize + pos.in_hand(c) as usize <= self.max_side);
        if !in_hand || !fits || pos.outcome(&self.rules()).is_terminal() {
            return None;
        }
        perfect::placement_choice(&self.placement(), pos, prefer, rng).ok()
    }
}

/// The points named in `text` (`"a7 d7 a4"`, separated by spaces or commas).
///
/// # Errors
/// A point name that does not exist, or a point named twice.
pub(crate) fn parse_points(text: &str) -> Result<BitBoard, String> {
    parse_points_on(text, &crate::board::NINE)
}

/// A set of points of `board` from their names separated by spaces or commas.
pub(crate) fn parse_points_on(text: &str, board: &crate::board::Board) -> Result<BitBoard, String> {
    let mut bb = BitBoard::EMPTY;
    for name in text.split([' ', ',']).filter(|s| !s.is_empty()) {
        let p = board
            .point_named(name)
            .ok_or_else(|| format!("no point named '{name}' on the {} board", board.name))?;
        if bb.has(p) {
            return Err(format!("point {name} named twice"));
        }
        bb |= p.bit();
    }
    Ok(bb)
}

/// A moving-phase position from point names: the pieces of the player to move and of the
/// opponent (`"a7 d7 a4"`, separated by spaces or commas), and who is to move.
///
/// # Errors
/// A point name that does not exist, or a point named twice.
pub fn position_from_points(mover: &str, opponent: &str, to_move: Color) -> Result<Position, TablebaseError> {
    let parse = |text: &str| parse_points(text).map_err(TablebaseError::NotCovered);
    let (m, o) = (parse(mover)?, parse(opponent)?);
    let (white, black) = if to_move == Color::White { (m, o) } else { (o, m) };
    Position::from_parts(white, black, [0, 0], to_move, false)
        .map_err(|e| TablebaseError::NotCovered(e.to_string()))
}

#[cfg(test)]
mod tests;
