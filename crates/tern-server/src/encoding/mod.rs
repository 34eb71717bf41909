//! Content codings, and the compression stage that runs on its own thread
//! between a query's producer and the network, so that producing the next
//! chunk and compressing the previous one overlap. Its level adapts to
//! whichever side is slower (`level.rs`); `compressor.rs` owns the streams.
//! A small result that is whole before anything of it is sent is
//! compressed where it was written instead ([`Coding::compress_whole`]).

mod compressor;
mod level;

use crate::chunk::Chunk;
use bytes::Bytes;
use compressor::Compressor;
use level::LevelControl;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{self, error::TrySendError};

/// Largest result compressed on the thread that wrote it, when it is whole
/// before its first byte leaves: a thread of its own and the hand-offs to
/// and from it cost more than compressing a few kilobytes (q14 of the
/// inference benchmark, 4 KB: 0.14 ms on the server identity, 0.56 gzip),
/// and 256 KiB take well under a quantum at the first level.
const COMPRESS_HERE_BYTES: usize = 256 << 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Deflate,
    Brotli,
    Zstd,
}

impl Encoding {
    /// The levels an adaptive stream moves between, fastest first, and the
    /// one it starts at, which is also the fixed level of a stream that
    /// does not adapt: export is about throughput, and level 1 already
    /// removes most of the redundancy of RDF text. Only zstd moves (see
    /// `compressor.rs`): up while the client is slower than the server,
    /// and below its start, to one of zstd's fast levels, while compression
    /// takes the cores the query needs (on a fast client; see `level.rs`).
    fn ladder(self) -> (&'static [i32], usize) {
        match self {
            Encoding::Identity => (&[0], 0),
            Encoding::Gzip | Encoding::Deflate | Encoding::Brotli => (&[1], 0),
            Encoding::Zstd => (&[ZSTD_FAST, 1, 3, 6, 9], 1),
        }
    }

    /// The level a response starts at (see [`ladder`](Self::ladder)).
    fn first_level(self) -> i32 {
        let (ladder, start) = self.ladder();
        ladder[start]
    }

    /// The `Content-Encoding` / `Accept-Encoding` token.
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Identity => "identity",
            Encoding::Gzip => "gzip",
            Encoding::Deflate => "deflate",
            Encoding::Brotli => "br",
            Encoding::Zstd => "zstd",
        }
    }
}

/// zstd's fast level that an adaptive stream falls to when compressing
/// at level 1 holds the query back. On 300 MB of BSBM 10M Turtle
/// (`zstd -b`): level 1 compresses 349 MB/s to a third (x3.29), -1 474 MB/s
/// (x2.15), -3 609 MB/s (x2.00), -5 698 MB/s (x1.88).
const ZSTD_FAST: i32 = -3;

/// How one response's content is compressed: decided at its first
/// delivery, when it is known whether the result is already whole.
pub struct Coding {
    encoding: Encoding,
    adaptive: bool,
}

impl Coding {
    /// `None` for identity. With `adaptive`, the level rises while the
    /// client is the bottleneck and falls back while it is not.
    pub fn new(encoding: Encoding, adaptive: bool) -> Option<Coding> {
        (encoding != Encoding::Identity).then_some(Coding { encoding, adaptive })
    }

    /// Compresses the chunks of a first delivery into one data chunk, at
    /// the first level, when they are a whole result (ending with its end)
    /// of at most [`COMPRESS_HERE_BYTES`]. `false` (and `chunks` as they
    /// were) otherwise, or when compression fails: the stage then does it.
    pub fn compress_whole(&self, chunks: &mut VecDeque<Chunk>) -> bool {
        let size: usize = chunks.iter().map(Chunk::data_len).sum();
        if !matches!(chunks.back(), Some(Chunk::End(_))) || size > COMPRESS_HERE_BYTES {
            return false;
        }
        let level = self.encoding.first_level();
        let compressed = (|| {
            let mut compressor = Compressor::new(self.encoding, level, size / 2 + 1024)?
                .expect("identity is not a coding");
            for chunk in chunks.iter() {
                if let Chunk::Data(data) = chunk {
                    compressor.write(data)?;
                }
            }
            compressor.finish()
        })();
        let out = match compressed {
            Ok(out) => out,
            Err(e) => {
                tracing::error!("compression failed: {e}");
                return false;
            }
        };
        let Some(Chunk::End(mut ending)) = chunks.pop_back() else {
            unreachable!("checked above");
        };
        ending.levels = vec![level];
        chunks.clear();
        chunks.push_back(Chunk::Data(Bytes::from(out)));
        chunks.push_back(Chunk::End(ending));
        true
    }

    /// Starts the compression stage on a thread of its own, from `input`
    /// to `output` (the channel the response body reads; as bounded as its
    /// input, so a slow client stops compression, which stops the
    /// producer).
    pub fn start(self, input: mpsc::Receiver<Chunk>, output: mpsc::Sender<Chunk>) {
        let (ladder, start) = self.encoding.ladder();
        let control = if self.adaptive {
            LevelControl::new(ladder, start)
        } else {
            LevelControl::new(&ladder[start..=start], 0)
        };
        let compressor = match Compressor::new(self.encoding, control.level(), 1 << 20) {
            Ok(Some(c)) => c,
            Ok(None) => unreachable!("identity is not a coding"),
            // Sending uncompressed would lie about Content-Encoding:
            // dropping `output` ends the stream as broken.
            Err(e) => {
                tracing::error!("cannot start {} compressor: {e}", self.encoding.token());
                return;
            }
        };
        std::thread::Builder::new()
            .name(format!("tern-{}", self.encoding.token()))
            .spawn(move || run(compressor, control, input, output))
            .expect("spawn a compression thread");
    }
}

fn run(
    mut compressor: Compressor,
    mut control: LevelControl,
    mut input: mpsc::Receiver<Chunk>,
    output: mpsc::Sender<Chunk>,
) {
    let mut levels = vec![control.level()];
    while let Some(chunk) = input.blocking_recv() {
        match chunk {
            Chunk::Data(data) => {
                let started = Instant::now();
                if let Err(e) = compressor.write(&data) {
                    tracing::error!("compression failed: {e}");
                    return;
                }
                // Nothing else waiting: let what we have leave now, so early
                // rows are not held back inside the compressor's window.
                if input.is_empty() {
                    if let Err(e) = compressor.flush() {
                        tracing::error!("compression failed: {e}");
                        return;
                    }
                }
                let out = compressor.take();
                let busy = started.elapsed();
                let mut blocked = Duration::ZERO;
                if !out.is_empty() {
                    match output.try_send(Chunk::Data(Bytes::from(out))) {
                        Ok(()) => {}
                        Err(TrySendError::Full(chunk)) => {
                            let waiting = Instant::now();
                            if output.blocking_send(chunk).is_err() {
                                return; // The client went away.
                            }
                            blocked = waiting.elapsed();
                        }
                        Err(TrySendError::Closed(_)) => return,
                    }
                }
                if let Some(level) = control.observe(busy, blocked) {
                    match compressor.set_level(level) {
                        Ok(true) => levels.push(level),
                        Ok(false) => {}
                        Err(e) => {
                            tracing::error!("compression failed: {e}");
                            return;
                        }
                    }
                }
            }
            Chunk::End(mut ending) => {
                ending.levels = levels;
                match compressor.finish() {
                    Ok(out) if !out.is_empty() => {
                        if output.blocking_send(Chunk::Data(Bytes::from(out))).is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::error!("compression failed: {e}");
                        return;
                    }
                }
                let _ = output.blocking_send(Chunk::End(ending));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::Ending;
    use std::io::Read;

    /// 256 chunks of 256 KiB of result-like text (words drawn at random, which
    /// a higher level compresses better).
    fn chunks() -> Vec<Vec<u8>> {
        const WORDS: [&str; 12] = [
            "alpha", "beta", "gamma", "red", "green", "blue", "small", "large", "quick", "slow",
            "warm", "cold",
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..256)
            .map(|c| {
                let mut text = String::new();
                let mut i = 0;
                while text.len() < 256 << 10 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let (a, b) = (WORDS[(x % 12) as usize], WORDS[((x >> 8) % 12) as usize]);
                    text += &format!("<http://example.org/s{c}x{i}>\t\"{a} {b} {}\"\n", x % 1000);
                    i += 1;
                }
                text.into_bytes()
            })
            .collect()
    }

    /// Runs the stage over `chunks` with a reader that waits `pause` after
    /// each compressed chunk; returns what it read.
    fn stream(adaptive: bool, pause: Duration) -> Vec<u8> {
        let (tx, rx) = mpsc::channel(2);
        let (output_tx, mut output) = mpsc::channel(2);
        Coding::new(Encoding::Zstd, adaptive)
            .unwrap()
            .start(rx, output_tx);
        let feeder = std::thread::spawn(move || {
            for chunk in chunks() {
                tx.blocking_send(Chunk::Data(Bytes::from(chunk))).unwrap();
            }
            tx.blocking_send(Chunk::End(Ending::default())).unwrap();
        });
        let mut wire = Vec::new();
        while let Some(chunk) = output.blocking_recv() {
            match chunk {
                Chunk::Data(data) => wire.extend_from_slice(&data),
                Chunk::End(_) => break,
            }
            std::thread::sleep(pause);
        }
        feeder.join().unwrap();
        wire
    }

    #[test]
    fn a_slow_reader_gets_fewer_bytes_and_every_frame_decodes() {
        // Several times what compressing a chunk takes, also on a loaded
        // machine: at 3 ms, CI's debug build beside other work compressed
        // about as slowly as the reader read, and the level stayed put.
        let slow = Duration::from_millis(10);
        let fixed = stream(false, slow);
        let adaptive = stream(true, slow);
        let mut decoded = Vec::new();
        zstd::stream::read::Decoder::new(&adaptive[..])
            .unwrap()
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, chunks().concat());
        assert!(
            adaptive.len() * 100 < fixed.len() * 97,
            "adaptive {} bytes, fixed {}",
            adaptive.len(),
            fixed.len()
        );
        // A reader that keeps up leaves the level at (or soon back at) the
        // fast one: about the fixed level's bytes, not the slow reader's.
        let fast = stream(true, Duration::ZERO).len();
        assert!(
            fast * 1000 > fixed.len() * 985,
            "{fast} bytes, fixed {}",
            fixed.len()
        );
    }
}
