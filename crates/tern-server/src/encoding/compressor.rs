//! One response's streaming compressor, whose level can change while it
//! runs (see `level.rs` for when it does).
//!
//! - zstd cannot change its level inside a frame (single-threaded), so a new
//!   level starts a new frame: a zstd content is one or more frames
//!   (RFC 8878, 3.1), and decoders (curl's, browsers', urllib3's) read them
//!   as one.
//! - gzip, deflate and brotli keep the level they started with. A deflate
//!   stream could change level between blocks (zlib's `deflateParams`), but
//!   the zlib-rs backend refuses it once data went through (it clears the
//!   output pointer that the flush inside needs), and a new gzip member per
//!   level is not read by every client (curl stops after the first).

use super::Encoding;
use std::io::Write;

pub enum Compressor {
    Gzip(flate2::write::GzEncoder<Vec<u8>>),
    /// HTTP's `deflate` is the zlib format (RFC 1950), not raw deflate.
    Deflate(flate2::write::ZlibEncoder<Vec<u8>>),
    Brotli(Box<brotli::CompressorWriter<Vec<u8>>>),
    Zstd(ZstdStream),
}

impl Compressor {
    /// A compressor at `level` (on the encoding's own scale), its output
    /// buffer made with `capacity` bytes; `None` for identity.
    pub fn new(
        encoding: Encoding,
        level: i32,
        capacity: usize,
    ) -> std::io::Result<Option<Compressor>> {
        Ok(Some(match encoding {
            Encoding::Identity => return Ok(None),
            Encoding::Gzip => Compressor::Gzip(flate2::write::GzEncoder::new(
                Vec::with_capacity(capacity),
                deflate_level(level),
            )),
            Encoding::Deflate => Compressor::Deflate(flate2::write::ZlibEncoder::new(
                Vec::with_capacity(capacity),
                deflate_level(level),
            )),
            // A 4 MiB window: brotli's fast setting at quality 1.
            Encoding::Brotli => Compressor::Brotli(Box::new(brotli::CompressorWriter::new(
                Vec::with_capacity(capacity),
                64 << 10,
                level.clamp(0, 11) as u32,
                22,
            ))),
            Encoding::Zstd => Compressor::Zstd(ZstdStream::new(level, capacity)?),
        }))
    }

    pub fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        match self {
            Compressor::Gzip(e) => e.write_all(data),
            Compressor::Deflate(e) => e.write_all(data),
            Compressor::Brotli(e) => e.write_all(data),
            Compressor::Zstd(z) => z.encoder.write_all(data),
        }
    }

    /// Pushes everything written so far into the output (a sync flush).
    pub fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Compressor::Gzip(e) => e.flush(),
            Compressor::Deflate(e) => e.flush(),
            Compressor::Brotli(e) => e.flush(),
            Compressor::Zstd(z) => z.encoder.flush(),
        }
    }

    /// Compresses what follows at `level`; false when this coding keeps
    /// its level.
    pub fn set_level(&mut self, level: i32) -> std::io::Result<bool> {
        match self {
            Compressor::Zstd(z) => z.set_level(level).map(|()| true),
            _ => Ok(false),
        }
    }

    /// The compressed bytes produced so far.
    pub fn take(&mut self) -> Vec<u8> {
        let fresh = || Vec::with_capacity(1 << 20);
        match self {
            Compressor::Gzip(e) => std::mem::replace(e.get_mut(), fresh()),
            Compressor::Deflate(e) => std::mem::replace(e.get_mut(), fresh()),
            Compressor::Brotli(e) => std::mem::replace(e.get_mut(), fresh()),
            Compressor::Zstd(z) if z.done.is_empty() => {
                std::mem::replace(z.encoder.get_mut(), fresh())
            }
            Compressor::Zstd(z) => {
                z.done.append(z.encoder.get_mut());
                std::mem::take(&mut z.done)
            }
        }
    }

    pub fn finish(self) -> std::io::Result<Vec<u8>> {
        match self {
            Compressor::Gzip(e) => e.finish(),
            Compressor::Deflate(e) => e.finish(),
            Compressor::Brotli(e) => Ok(e.into_inner()),
            Compressor::Zstd(mut z) => {
                let last = z.encoder.finish()?;
                z.done.extend_from_slice(&last);
                Ok(z.done)
            }
        }
    }
}

fn deflate_level(level: i32) -> flate2::Compression {
    flate2::Compression::new(level.clamp(1, 9) as u32)
}

/// zstd frames, a new one for each level.
pub struct ZstdStream {
    encoder: zstd::stream::write::Encoder<'static, Vec<u8>>,
    level: i32,
    /// Output of the frames already ended.
    done: Vec<u8>,
}

impl ZstdStream {
    fn new(level: i32, capacity: usize) -> std::io::Result<ZstdStream> {
        Ok(ZstdStream {
            encoder: zstd::stream::write::Encoder::new(Vec::with_capacity(capacity), level)?,
            level,
            done: Vec::new(),
        })
    }

    /// A new frame starts (without the old one's window: a change costs
    /// a little ratio, so levels change seldom, see `level.rs`).
    fn set_level(&mut self, level: i32) -> std::io::Result<()> {
        if level == self.level {
            return Ok(());
        }
        self.level = level;
        let next = zstd::stream::write::Encoder::new(Vec::with_capacity(1 << 20), level)?;
        let ended = std::mem::replace(&mut self.encoder, next).finish()?;
        self.done.extend_from_slice(&ended);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Result-like text: IRIs that repeat, literals of words drawn at
    /// random (a higher level finds more in it, as in real results).
    fn text(lines: usize) -> Vec<u8> {
        const WORDS: [&str; 16] = [
            "alpha", "beta", "gamma", "delta", "red", "green", "blue", "small", "large", "quick",
            "slow", "bright", "dark", "warm", "cold", "heavy",
        ];
        let mut x = 88_172_645_463_325_252u64;
        let mut word = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            WORDS[(x % 16) as usize]
        };
        let mut out = String::new();
        for i in 0..lines {
            let label: Vec<&str> = (0..6).map(|_| word()).collect();
            out += &format!(
                "<http://example.org/product{}>\t<http://example.org/p{}>\t\"{}\"\n",
                i / 3,
                i % 3,
                label.join(" ")
            );
        }
        out.into_bytes()
    }

    /// Compresses `data` in chunks, moving through `levels` one per chunk.
    fn compress(encoding: Encoding, data: &[u8], levels: &[i32]) -> Vec<u8> {
        let mut c = Compressor::new(encoding, levels[0], 1 << 20)
            .unwrap()
            .unwrap();
        let mut out = Vec::new();
        let chunks: Vec<&[u8]> = data.chunks(data.len().div_ceil(levels.len())).collect();
        for (chunk, level) in chunks.iter().zip(levels) {
            c.set_level(*level).unwrap();
            c.write(chunk).unwrap();
            c.flush().unwrap();
            out.extend(c.take());
        }
        out.extend(c.finish().unwrap());
        out
    }

    fn decode(encoding: Encoding, wire: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        match encoding {
            Encoding::Gzip => flate2::read::GzDecoder::new(wire).read_to_end(&mut out),
            Encoding::Deflate => flate2::read::ZlibDecoder::new(wire).read_to_end(&mut out),
            Encoding::Brotli => brotli::Decompressor::new(wire, 64 << 10).read_to_end(&mut out),
            // Reads every frame, as HTTP clients do.
            Encoding::Zstd => zstd::stream::read::Decoder::new(wire)
                .unwrap()
                .read_to_end(&mut out),
            _ => unreachable!(),
        }
        .unwrap();
        out
    }

    #[test]
    fn streams_whose_level_changes_decode_to_what_went_in() {
        let data = text(40_000);
        for encoding in [
            Encoding::Gzip,
            Encoding::Deflate,
            Encoding::Brotli,
            Encoding::Zstd,
        ] {
            for levels in [vec![1], vec![1, 3, 6, 6, 3, 1], vec![6, 1, 9, 1]] {
                let wire = compress(encoding, &data, &levels);
                assert_eq!(decode(encoding, &wire), data, "{encoding:?} at {levels:?}");
            }
        }
    }

    #[test]
    fn a_higher_zstd_level_sends_fewer_bytes() {
        let data = text(40_000);
        let fast = compress(Encoding::Zstd, &data, &[1, 1, 1, 1]).len();
        let raised = compress(Encoding::Zstd, &data, &[1, 9, 9, 9]).len();
        assert!(
            raised < fast,
            "{raised} bytes raised to 9 against {fast} at 1"
        );
    }

    #[test]
    fn only_zstd_changes_level() {
        for encoding in [Encoding::Gzip, Encoding::Deflate, Encoding::Brotli] {
            let mut c = Compressor::new(encoding, 1, 1 << 20).unwrap().unwrap();
            assert!(!c.set_level(6).unwrap(), "{encoding:?}");
        }
        let mut c = Compressor::new(Encoding::Zstd, 1, 1 << 20)
            .unwrap()
            .unwrap();
        assert!(c.set_level(6).unwrap());
    }
}
