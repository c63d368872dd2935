//! Request/reply traffic (`workload.reply`, BookSim's `use_read_write`): the lengths of
//! a request and of the reply its delivery will create, drawn together when the request
//! is created, from the creating node's random stream. The reply itself is created by
//! the switching mode at the request's destination (`switching::wormhole`), which this
//! module does not know of; its message class and VCs are the router's.

use crate::config::{LengthConfig, ReplyConfig};
use crate::foundation::error::{Error, Result};
use crate::foundation::rng::{unit, NodeRng};
use crate::traffic::LengthDist;

/// The checked reply settings of a workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Replies {
    /// Length of the reply to a read (every request without writes).
    pub read_reply: LengthDist,
    /// Writes: (probability, request length, reply length).
    pub writes: Option<(f64, LengthDist, LengthDist)>,
}

/// A length distribution of the reply settings, its errors naming `field`.
fn dist(cfg: &LengthConfig, field: &str) -> Result<LengthDist> {
    LengthDist::new(cfg).map_err(|e| match e {
        Error::Config(m) => Error::config(m.replacen("workload.length", field, 1)),
        e => e,
    })
}

impl Replies {
    /// Checks the settings.
    pub fn new(cfg: &ReplyConfig) -> Result<Self> {
        let writes = match &cfg.writes {
            None => None,
            Some(w) => {
                if !(0.0..=1.0).contains(&w.fraction) {
                    return Err(Error::config(format!(
                        "workload.reply.writes.fraction = {}: the probability that a request \
                         is a write must be in [0, 1]",
                        crate::foundation::limits::show(w.fraction)
                    )));
                }
                Some((
                    w.fraction,
                    dist(&w.request, "workload.reply.writes.request")?,
                    dist(&w.reply, "workload.reply.writes.reply")?,
                ))
            }
        };
        Ok(Replies {
            read_reply: dist(&cfg.length, "workload.reply.length")?,
            writes,
        })
    }

    /// Draws a request's length and its reply's: `read` is the workload's length
    /// distribution (the reads' requests). Without writes, the request's length is drawn
    /// first, exactly as a one-way message's would be, then the reply's.
    #[inline]
    pub fn draw(&self, read: &LengthDist, rng: &mut NodeRng) -> (u32, u32) {
        match &self.writes {
            Some((p, request, reply)) if unit(rng) < *p => (request.sample(rng), reply.sample(rng)),
            _ => (read.sample(rng), self.read_reply.sample(rng)),
        }
    }

    /// Mean flits of a request and of its reply together (`read` as in
    /// [`Replies::draw`]): what one request puts into the network, round trip.
    pub fn mean_round_trip_flits(&self, read: &LengthDist) -> f64 {
        let reads = read.mean() + self.read_reply.mean();
        match &self.writes {
            Some((p, request, reply)) => (1.0 - p) * reads + p * (request.mean() + reply.mean()),
            None => reads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WritesConfig;
    use crate::foundation::rng::stream;

    fn constant(flits: u32) -> LengthConfig {
        LengthConfig::Constant { flits }
    }

    #[test]
    fn reads_draw_the_request_as_a_one_way_message_would_then_the_reply() {
        let r = Replies::new(&ReplyConfig {
            length: LengthConfig::Uniform { min: 1, max: 9 },
            writes: None,
        })
        .unwrap();
        let read = LengthDist::new(&LengthConfig::Uniform { min: 1, max: 9 }).unwrap();
        let (mut a, mut b) = (stream(7, 0, 3, 0), stream(7, 0, 3, 0));
        for _ in 0..100 {
            let (req, rep) = r.draw(&read, &mut a);
            assert_eq!(req, read.sample(&mut b));
            assert_eq!(rep, read.sample(&mut b));
        }
    }

    #[test]
    fn the_write_fraction_picks_the_write_lengths() {
        let r = Replies::new(&ReplyConfig {
            length: constant(5),
            writes: Some(WritesConfig {
                fraction: 0.25,
                request: constant(5),
                reply: constant(1),
            }),
        })
        .unwrap();
        let read = LengthDist::Constant(1);
        let mut rng = stream(1, 0, 0, 0);
        let n = 20_000;
        let writes = (0..n)
            .map(|_| r.draw(&read, &mut rng))
            .inspect(|&(q, p)| assert!((q, p) == (1, 5) || (q, p) == (5, 1)))
            .filter(|&(q, _)| q == 5)
            .count();
        let share = writes as f64 / n as f64;
        assert!((share - 0.25).abs() < 0.015, "write share {share}");
        assert_eq!(r.mean_round_trip_flits(&read), 6.0);
    }

    #[test]
    fn bad_settings_name_their_field() {
        let e = Replies::new(&ReplyConfig {
            length: constant(0),
            writes: None,
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("workload.reply.length"), "{e}");
        let e = Replies::new(&ReplyConfig {
            length: constant(1),
            writes: Some(WritesConfig {
                fraction: 1.5,
                request: constant(1),
                reply: constant(1),
            }),
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("writes.fraction"), "{e}");
    }
}
