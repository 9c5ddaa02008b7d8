//! Tablebase probing speed and placement-phase solving time on built tables:
//! `cargo run --release -p morris-env --example tbspeed -- DIR [probes N] [solve "MOVES"]
//! [random K H] [minimax DEPTH PLIES N]`.
//!
//! `probes N` probes N positions drawn uniformly from the tables twice, the first pass with
//! whatever the page cache holds (cold after `echo 3 > /proc/sys/vm/drop_caches`) and the
//! second warm, and prints probes per second for each. `solve MOVES` solves the placement
//! position after MOVES (notation, space-separated) and prints its value, nodes and time.
//! `random K H` solves five random positions with K pieces on the board and H in hand a side.
//! `minimax DEPTH PLIES N` searches N positions after PLIES random plies (seeds 1..=N) to
//! DEPTH without and then with the tables as leaves, and prints the nodes per second of each
//! (the search alone: the time to the last iteration, not the placement check after it).

use std::path::PathBuf;
use std::time::Instant;

use morris_env::tablebase::{Placement, SharedTablebase, Tablebase};
use morris_env::{
    Action, BitBoard, Color, Game, Minimax, MinimaxConfig, Point, Position, Rng, Rules, SearchResult,
};

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: tbspeed DIR [probes N] [solve MOVES] [random K H] [minimax DEPTH PLIES N]")?,
    );
    let t = Instant::now();
    // Not `open_shared`: its checksum pass would read every file before the first probe.
    let tb = SharedTablebase(std::sync::Arc::new(Tablebase::open(&dir).map_err(|e| e.to_string())?));
    println!("opened {} sectors in {:.3} s", tb.sector_names().len(), t.elapsed().as_secs_f64());
    while let Some(cmd) = args.next() {
        match cmd.as_str() {
            "probes" => {
                let n: usize = args.next().and_then(|s| s.parse().ok()).ok_or("probes N")?;
                let mut rng = Rng::seed_from_u64(7);
                let positions: Vec<_> = (0..n).map(|_| tb.random_position(&mut rng)).collect();
                for pass in ["first", "second"] {
                    let t = Instant::now();
                    let mut wins = 0u64;
                    for p in &positions {
                        wins += tb.probe(p).is_some_and(|p| p.wdl == morris_env::tablebase::Wdl::Win) as u64;
                    }
                    let s = t.elapsed().as_secs_f64();
                    println!(
                        "{pass} pass: {n} probes in {s:.3} s, {:.0} probes/s ({wins} wins)",
                        n as f64 / s
                    );
                }
            }
            "solve" => {
                let moves = args.next().ok_or("solve MOVES")?;
                let game = Game::from_notation(Rules::standard(), &moves).map_err(|e| e.to_string())?;
                let log2: u32 = std::env::var("TT_LOG2").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
                let solver = Placement::new(&tb, game.rules(), log2).map_err(|e| e.to_string())?;
                let t = Instant::now();
                let v = solver.value(game.position()).map_err(|e| e.to_string())?;
                let s = solver.stats();
                let secs = t.elapsed().as_secs_f64();
                println!(
                    "after '{moves}': {v} for {} to move; {} nodes, {} leaves in {secs:.2} s ({:.0} nodes/s)",
                    game.position().current_player(),
                    s.nodes,
                    s.leaves,
                    s.nodes as f64 / secs
                );
            }
            "random" => {
                // `random K H`: K pieces on the board and H in hand for each side, White to
                // move, points drawn at random (seed 1..=5).
                let k: u32 = args.next().and_then(|s| s.parse().ok()).ok_or("random K H")?;
                let h: u8 = args.next().and_then(|s| s.parse().ok()).ok_or("random K H")?;
                let log2: u32 = std::env::var("TT_LOG2").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
                for seed in 1..=5 {
                    let mut rng = Rng::seed_from_u64(seed);
                    let mut w = BitBoard::EMPTY;
                    let mut b = BitBoard::EMPTY;
                    while w.count() < k || b.count() < k {
                        let p = Point::ALL[rng.below(24) as usize];
                        if (w | b).has(p) {
                            continue;
                        }
                        if w.count() < k { w |= p.bit() } else { b |= p.bit() }
                    }
                    let pos =
                        Position::from_parts(w, b, [h, h], Color::White, false).map_err(|e| e.to_string())?;
                    let solver = Placement::new(&tb, &Rules::standard(), log2).map_err(|e| e.to_string())?;
                    let t = Instant::now();
                    let v = solver.value(&pos).map_err(|e| e.to_string())?;
                    let s = solver.stats();
                    let secs = t.elapsed().as_secs_f64();
                    println!(
                        "{k}+{h} a side, seed {seed}: {v} for White; {} nodes, {} leaves in {secs:.3} s ({:.0} nodes/s)",
                        s.nodes,
                        s.leaves,
                        s.nodes as f64 / secs
                    );
                }
            }
            "minimax" => {
                let mut num =
                    || args.next().and_then(|s| s.parse::<u32>().ok()).ok_or("minimax DEPTH PLIES N");
                let (depth, plies, n) = (num()?, num()?, num()?);
                let games: Vec<Game> = (1..=n as u64)
                    .map(|seed| {
                        let mut g = Game::new(Rules::standard());
                        g.random_opening(&mut Rng::seed_from_u64(seed), plies);
                        g
                    })
                    .filter(|g| !g.outcome().is_terminal())
                    .collect();
                for with_tables in [false, true] {
                    let (mut nodes, mut secs) = (0u64, 0.0f64);
                    for g in &games {
                        let mut config = MinimaxConfig::depth(depth);
                        config.tablebase = with_tables.then(|| tb.clone());
                        let mut search = Minimax::new(config);
                        let t = Instant::now();
                        let mut last = (0u64, 0.0f64);
                        search.search_reporting(
                            g,
                            Some(|r: &SearchResult, _: &[Action]| {
                                last = (r.nodes, t.elapsed().as_secs_f64())
                            }),
                        );
                        nodes += last.0;
                        secs += last.1;
                    }
                    println!(
                        "minimax depth {depth} after {plies} plies, {} positions, {}: {nodes} nodes in {secs:.2} s, {:.0} nodes/s",
                        games.len(),
                        if with_tables { "tables as leaves" } else { "no tables" },
                        nodes as f64 / secs
                    );
                }
            }
            other => return Err(format!("unknown command '{other}'")),
        }
    }
    Ok(())
}
