//! The frames a jsonnet worker and its parent exchange over the worker's stdin and
//! stdout. A frame is a tag byte, the payload's length (u32, little-endian) and the
//! payload: fields one after the other, a number as a u64 and a text or a file as its
//! length (u64) then its bytes, all little-endian. A frame longer than [`MAX_FRAME`]
//! is refused before it is read, and a frame is read as its bytes arrive, never
//! allocated whole from its declared length.

use std::io::{self, Read, Write};

/// The longest frame either side accepts: a file, the scope or an output, with room.
const MAX_FRAME: u64 = 256 * 1024 * 1024;

/// What the parent sends.
#[derive(Debug, PartialEq, Eq)]
pub enum ToWorker {
    /// Evaluate `source` (named `name`) with `context` as the scope, holding at most
    /// `memory` bytes.
    Evaluate {
        memory: u64,
        name: String,
        source: Vec<u8>,
        context: String,
    },
    /// The answer to the worker's last [`FromWorker::Import`].
    Imported(Result<(String, Vec<u8>), String>),
}

/// What the worker sends.
#[derive(Debug, PartialEq, Eq)]
pub enum FromWorker {
    /// Read `path` relative to the file `from` and answer with [`ToWorker::Imported`].
    Import { from: String, path: String },
    /// The evaluation's JSON output or its error, and the most it held at once.
    Done {
        result: Result<String, String>,
        peak: u64,
    },
}

const EVALUATE: u8 = b'E';
const IMPORTED: u8 = b'R';
const NOT_IMPORTED: u8 = b'r';
const IMPORT: u8 = b'I';
const DONE: u8 = b'D';
const FAILED: u8 = b'd';

pub fn send_to_worker(out: &mut impl Write, message: &ToWorker) -> io::Result<()> {
    let mut payload = Payload::default();
    let tag = match message {
        ToWorker::Evaluate {
            memory,
            name,
            source,
            context,
        } => {
            payload.number(*memory);
            payload.bytes(name.as_bytes());
            payload.bytes(source);
            payload.bytes(context.as_bytes());
            EVALUATE
        }
        ToWorker::Imported(Ok((name, bytes))) => {
            payload.bytes(name.as_bytes());
            payload.bytes(bytes);
            IMPORTED
        }
        ToWorker::Imported(Err(reason)) => {
            payload.bytes(reason.as_bytes());
            NOT_IMPORTED
        }
    };
    payload.send(out, tag)
}

pub fn send_from_worker(out: &mut impl Write, message: &FromWorker) -> io::Result<()> {
    let mut payload = Payload::default();
    let tag = match message {
        FromWorker::Import { from, path } => {
            payload.bytes(from.as_bytes());
            payload.bytes(path.as_bytes());
            IMPORT
        }
        FromWorker::Done { result, peak } => {
            payload.number(*peak);
            match result {
                Ok(text) => {
                    payload.bytes(text.as_bytes());
                    DONE
                }
                Err(reason) => {
                    payload.bytes(reason.as_bytes());
                    FAILED
                }
            }
        }
    };
    payload.send(out, tag)
}

/// The next message for the worker; `None` when the parent closed the pipe.
pub fn receive_in_worker(input: &mut impl Read) -> io::Result<Option<ToWorker>> {
    let Some((tag, payload)) = read_frame(input)? else {
        return Ok(None);
    };
    let mut fields = Fields(&payload);
    let message = match tag {
        EVALUATE => ToWorker::Evaluate {
            memory: fields.number()?,
            name: fields.text()?,
            source: fields.bytes()?.to_vec(),
            context: fields.text()?,
        },
        IMPORTED => ToWorker::Imported(Ok((fields.text()?, fields.bytes()?.to_vec()))),
        NOT_IMPORTED => ToWorker::Imported(Err(fields.text()?)),
        other => return Err(unknown(other)),
    };
    fields.end()?;
    Ok(Some(message))
}

/// The next message from the worker; `None` when the worker closed the pipe.
pub fn receive_from_worker(input: &mut impl Read) -> io::Result<Option<FromWorker>> {
    let Some((tag, payload)) = read_frame(input)? else {
        return Ok(None);
    };
    let mut fields = Fields(&payload);
    let message = match tag {
        IMPORT => FromWorker::Import {
            from: fields.text()?,
            path: fields.text()?,
        },
        DONE | FAILED => {
            let peak = fields.number()?;
            let text = fields.text()?;
            FromWorker::Done {
                result: if tag == DONE { Ok(text) } else { Err(text) },
                peak,
            }
        }
        other => return Err(unknown(other)),
    };
    fields.end()?;
    Ok(Some(message))
}

fn unknown(tag: u8) -> io::Error {
    invalid(format!("unknown frame {tag:#04x}"))
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

#[derive(Default)]
struct Payload(Vec<u8>);

impl Payload {
    fn number(&mut self, n: u64) {
        self.0.extend_from_slice(&n.to_le_bytes());
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.number(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    fn send(self, out: &mut impl Write, tag: u8) -> io::Result<()> {
        let length = u32::try_from(self.0.len())
            .ok()
            .filter(|&n| u64::from(n) <= MAX_FRAME)
            .ok_or_else(|| invalid(format!("a frame of {} bytes is too long", self.0.len())))?;
        out.write_all(&[tag])?;
        out.write_all(&length.to_le_bytes())?;
        out.write_all(&self.0)?;
        out.flush()
    }
}

/// A frame's tag and payload; `None` at a clean end of input (before a tag).
fn read_frame(input: &mut impl Read) -> io::Result<Option<(u8, Vec<u8>)>> {
    let mut tag = [0u8; 1];
    if input.read(&mut tag)? == 0 {
        return Ok(None);
    }
    let mut length = [0u8; 4];
    input.read_exact(&mut length)?;
    let length = u64::from(u32::from_le_bytes(length));
    if length > MAX_FRAME {
        return Err(invalid(format!(
            "a frame of {length} bytes is longer than the {MAX_FRAME} accepted"
        )));
    }
    let mut payload = Vec::new();
    input.take(length).read_to_end(&mut payload)?;
    if payload.len() as u64 != length {
        return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
    }
    Ok(Some((tag[0], payload)))
}

struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn number(&mut self) -> io::Result<u64> {
        let (head, rest) = self
            .0
            .split_first_chunk::<8>()
            .ok_or_else(|| invalid("a frame ends inside a number".to_string()))?;
        self.0 = rest;
        Ok(u64::from_le_bytes(*head))
    }

    fn bytes(&mut self) -> io::Result<&'a [u8]> {
        let length = self.number()?;
        let length = usize::try_from(length)
            .ok()
            .filter(|&n| n <= self.0.len())
            .ok_or_else(|| invalid("a frame ends inside a field".to_string()))?;
        let (field, rest) = self.0.split_at(length);
        self.0 = rest;
        Ok(field)
    }

    fn text(&mut self) -> io::Result<String> {
        String::from_utf8(self.bytes()?.to_vec())
            .map_err(|_| invalid("a text field is not UTF-8".to_string()))
    }

    fn end(&self) -> io::Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(invalid(format!(
                "{} bytes after a frame's fields",
                self.0.len()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_reads_back_as_it_was_sent() {
        let to_worker = [
            ToWorker::Evaluate {
                memory: 1 << 30,
                name: "j.jsonnet".into(),
                source: b"{ a: 1 }".to_vec(),
                context: "{}".into(),
            },
            ToWorker::Imported(Ok(("lib.libsonnet".into(), vec![0, 255, 10]))),
            ToWorker::Imported(Err("no such file".into())),
        ];
        let mut pipe = Vec::new();
        for message in &to_worker {
            send_to_worker(&mut pipe, message).unwrap();
        }
        let mut input = pipe.as_slice();
        for message in &to_worker {
            assert_eq!(
                receive_in_worker(&mut input).unwrap().as_ref(),
                Some(message)
            );
        }
        assert_eq!(receive_in_worker(&mut input).unwrap(), None);

        let from_worker = [
            FromWorker::Import {
                from: "j.jsonnet".into(),
                path: "lib.libsonnet".into(),
            },
            FromWorker::Done {
                result: Ok("{\"a\":1}".into()),
                peak: 4096,
            },
            FromWorker::Done {
                result: Err("j.jsonnet:1:3: error: boom".into()),
                peak: 0,
            },
        ];
        let mut pipe = Vec::new();
        for message in &from_worker {
            send_from_worker(&mut pipe, message).unwrap();
        }
        let mut input = pipe.as_slice();
        for message in &from_worker {
            assert_eq!(
                receive_from_worker(&mut input).unwrap().as_ref(),
                Some(message)
            );
        }
        assert_eq!(receive_from_worker(&mut input).unwrap(), None);
    }

    #[test]
    fn a_frame_too_long_or_cut_short_is_refused_without_reading_it() {
        let mut huge = vec![DONE];
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        let error = receive_from_worker(&mut huge.as_slice()).unwrap_err();
        assert!(error.to_string().contains("longer than"), "{error}");

        let mut pipe = Vec::new();
        send_from_worker(
            &mut pipe,
            &FromWorker::Import {
                from: "a".into(),
                path: "b".into(),
            },
        )
        .unwrap();
        pipe.truncate(pipe.len() - 1);
        assert!(receive_from_worker(&mut pipe.as_slice()).is_err());

        let bad_tag = [b'?', 0, 0, 0, 0];
        assert!(receive_from_worker(&mut bad_tag.as_slice()).is_err());
    }
}
