//! Content codings, and the compression stage that runs on its own thread
//! between a query's producer and the network, so that producing the next
//! chunk and compressing the previous one overlap.

use crate::chunk::Chunk;
use bytes::Bytes;
use std::io::Write;
use tokio::sync::mpsc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Deflate,
    Brotli,
    Zstd,
}

impl Encoding {
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

/// A streaming compressor over an output buffer that is drained after every
/// input chunk. Levels are the fast ones: export is about throughput, and
/// level 1 already removes most of the redundancy of RDF text.
enum Compressor {
    Gzip(flate2::write::GzEncoder<Vec<u8>>),
    /// HTTP's `deflate` is the zlib format (RFC 1950), not raw deflate.
    Deflate(flate2::write::ZlibEncoder<Vec<u8>>),
    Brotli(Box<brotli::CompressorWriter<Vec<u8>>>),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
}

impl Compressor {
    fn new(encoding: Encoding) -> std::io::Result<Option<Compressor>> {
        let out = Vec::with_capacity(1 << 20);
        Ok(Some(match encoding {
            Encoding::Identity => return Ok(None),
            Encoding::Gzip => Compressor::Gzip(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::fast(),
            )),
            Encoding::Deflate => Compressor::Deflate(flate2::write::ZlibEncoder::new(
                out,
                flate2::Compression::fast(),
            )),
            // Quality 1 with a 4 MiB window: brotli's fast setting.
            Encoding::Brotli => Compressor::Brotli(Box::new(brotli::CompressorWriter::new(
                out,
                64 << 10,
                1,
                22,
            ))),
            Encoding::Zstd => Compressor::Zstd(zstd::stream::write::Encoder::new(out, 1)?),
        }))
    }

    fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        match self {
            Compressor::Gzip(e) => e.write_all(data),
            Compressor::Deflate(e) => e.write_all(data),
            Compressor::Brotli(e) => e.write_all(data),
            Compressor::Zstd(e) => e.write_all(data),
        }
    }

    /// Pushes everything written so far into the output (a sync flush).
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Compressor::Gzip(e) => e.flush(),
            Compressor::Deflate(e) => e.flush(),
            Compressor::Brotli(e) => e.flush(),
            Compressor::Zstd(e) => e.flush(),
        }
    }

    /// The compressed bytes produced so far.
    fn take(&mut self) -> Vec<u8> {
        let out = match self {
            Compressor::Gzip(e) => e.get_mut(),
            Compressor::Deflate(e) => e.get_mut(),
            Compressor::Brotli(e) => e.get_mut(),
            Compressor::Zstd(e) => e.get_mut(),
        };
        std::mem::replace(out, Vec::with_capacity(1 << 20))
    }

    fn finish(self) -> std::io::Result<Vec<u8>> {
        match self {
            Compressor::Gzip(e) => e.finish(),
            Compressor::Deflate(e) => e.finish(),
            Compressor::Brotli(e) => Ok(e.into_inner()),
            Compressor::Zstd(e) => e.finish(),
        }
    }
}

/// Puts a compression stage after `input` when `encoding` asks for one and
/// returns the channel the response body reads. The stage's output channel
/// is as bounded as its input, so a slow client stops compression, which
/// stops the producer.
pub fn compress_stage(
    input: mpsc::Receiver<Chunk>,
    encoding: Encoding,
    capacity: usize,
) -> mpsc::Receiver<Chunk> {
    let compressor = match Compressor::new(encoding) {
        Ok(Some(c)) => c,
        // Identity, or a compressor that cannot start: send uncompressed
        // would lie about Content-Encoding, so identity is decided earlier
        // and an init failure ends the stream as broken.
        Ok(None) => return input,
        Err(e) => {
            tracing::error!("cannot start {} compressor: {e}", encoding.token());
            let (_tx, rx) = mpsc::channel(1);
            return rx;
        }
    };
    let (tx, output) = mpsc::channel(capacity);
    std::thread::Builder::new()
        .name(format!("tern-{}", encoding.token()))
        .spawn(move || run(compressor, input, tx))
        .expect("spawn a compression thread");
    output
}

fn run(mut compressor: Compressor, mut input: mpsc::Receiver<Chunk>, output: mpsc::Sender<Chunk>) {
    while let Some(chunk) = input.blocking_recv() {
        match chunk {
            Chunk::Data(data) => {
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
                if !out.is_empty() && output.blocking_send(Chunk::Data(Bytes::from(out))).is_err() {
                    return; // The client went away.
                }
            }
            Chunk::End(ending) => {
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
