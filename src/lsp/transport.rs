//! The server's stdio transport: JSON-RPC messages framed by `Content-Length`
//! headers, read on one thread and written on another.
//!
//! A client is trusted with framing, not with sizes or contents: a message longer
//! than [`MAX_MESSAGE`] is skipped as it arrives (never allocated from its declared
//! length) and answered with an error; a body that is not JSON, or not a JSON-RPC
//! message, is answered with JSON-RPC's parse or invalid-request error; the server
//! keeps serving either way. Only headers that cannot be framed (no length, a length
//! that is not a number, a header line longer than [`MAX_HEADER_LINE`]) end the
//! session, since no later message could be found in the stream.

use crossbeam_channel::{select, unbounded, Receiver, Sender};
use lsp_server::{Connection, Message};
use serde_json::{json, Value};
use std::io::{self, BufRead, Read, Write};

/// The longest message body the server reads.
pub(crate) const MAX_MESSAGE: u64 = 64 * 1024 * 1024;

/// The longest header line.
const MAX_HEADER_LINE: u64 = 8 * 1024;

/// JSON-RPC's error codes for what the transport refuses.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;

/// The transport's threads, to join once the server is done.
pub struct Threads {
    reader: std::thread::JoinHandle<io::Result<()>>,
    writer: std::thread::JoinHandle<io::Result<()>>,
}

impl Threads {
    pub fn join(self) -> Result<(), String> {
        // The reader may be blocked on stdin after the client's `exit`: the server is
        // done, so only the writer (what the client still has to receive) is awaited.
        drop(self.reader);
        match self.writer.join() {
            Ok(result) => result.map_err(|e| format!("stdout: {e}")),
            Err(_) => Err("the stdout writer panicked".to_string()),
        }
    }
}

/// A connection over this process's stdin and stdout.
pub fn stdio() -> Result<(Connection, Threads), String> {
    let (to_server, from_client) = unbounded::<Message>();
    let (to_client, outgoing) = unbounded::<Message>();
    let (refusals, refused) = unbounded::<Value>();
    let reader = std::thread::Builder::new()
        .name("lsp-reader".into())
        .spawn(move || {
            let read = read_messages(&mut io::stdin().lock(), &to_server, &refusals);
            if let Err(e) = &read {
                // The client's log shows the server's stderr.
                eprintln!("bpc lsp: {e}");
            }
            read
        })
        .map_err(|e| format!("cannot start the stdin reader: {e}"))?;
    let writer = std::thread::Builder::new()
        .name("lsp-writer".into())
        .spawn(move || write_messages(&mut io::stdout().lock(), &outgoing, &refused))
        .map_err(|e| format!("cannot start the stdout writer: {e}"))?;
    let connection = Connection {
        sender: to_client,
        receiver: from_client,
    };
    Ok((connection, Threads { reader, writer }))
}

/// Reads messages until the input ends, the client sends `exit`, or the framing is
/// lost; what it refuses goes to `refusals` as the error response to send.
pub fn read_messages(
    input: &mut impl BufRead,
    to_server: &Sender<Message>,
    refusals: &Sender<Value>,
) -> io::Result<()> {
    loop {
        let body = match read_frame(input)? {
            Frame::End => return Ok(()),
            Frame::TooLong(length) => {
                let _ = refusals.send(refusal(
                    Value::Null,
                    INVALID_REQUEST,
                    format!("a message of {length} bytes is longer than the {MAX_MESSAGE} bytes the server reads"),
                ));
                continue;
            }
            Frame::Body(body) => body,
        };
        let message = match parse(&body) {
            Ok(message) => message,
            Err(refused) => {
                let _ = refusals.send(refused);
                continue;
            }
        };
        let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
        if to_server.send(message).is_err() || exit {
            return Ok(());
        }
    }
}

enum Frame {
    End,
    TooLong(u64),
    Body(Vec<u8>),
}

fn read_frame(input: &mut impl BufRead) -> io::Result<Frame> {
    let mut length = None;
    let mut first = true;
    loop {
        let mut line = Vec::new();
        let read = input
            .by_ref()
            .take(MAX_HEADER_LINE + 1)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            if first {
                return Ok(Frame::End);
            }
            return Err(lost("the input ended inside a message's headers"));
        }
        if line.last() != Some(&b'\n') {
            return Err(lost("a header line is longer than 8 KiB or unfinished"));
        }
        first = false;
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("Content-Length") {
                let value = value.trim();
                let parsed = value.parse::<u64>().map_err(|_| {
                    lost(&format!(
                        "the Content-Length {:?} is not a number",
                        value.chars().take(32).collect::<String>()
                    ))
                })?;
                length = Some(parsed);
            }
        }
    }
    let length = length.ok_or_else(|| lost("a message has no Content-Length header"))?;
    if length > MAX_MESSAGE {
        io::copy(&mut input.by_ref().take(length), &mut io::sink())?;
        return Ok(Frame::TooLong(length));
    }
    let mut body = Vec::new();
    input.by_ref().take(length).read_to_end(&mut body)?;
    if body.len() as u64 != length {
        return Err(lost("the input ended inside a message"));
    }
    Ok(Frame::Body(body))
}

fn lost(reason: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the client's messages cannot be framed: {reason}"),
    )
}

/// A body as a message, or the error response refusing it.
fn parse(body: &[u8]) -> Result<Message, Value> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        refusal(
            Value::Null,
            PARSE_ERROR,
            format!("the message is not JSON: {e}"),
        )
    })?;
    let id = match value.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    serde_json::from_value(value).map_err(|e| {
        refusal(
            id,
            INVALID_REQUEST,
            format!("the message is not a JSON-RPC request, response or notification: {e}"),
        )
    })
}

fn refusal(id: Value, code: i32, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Writes the server's messages and the reader's refusals until the server is done.
fn write_messages(
    output: &mut impl Write,
    outgoing: &Receiver<Message>,
    refused: &Receiver<Value>,
) -> io::Result<()> {
    // Once the reader is gone, only the server's messages are left to write.
    let mut refused = Some(refused);
    loop {
        let Some(refusals) = refused else {
            for message in outgoing {
                message.write(output)?;
            }
            return Ok(());
        };
        select! {
            recv(outgoing) -> message => match message {
                Ok(message) => message.write(output)?,
                Err(_) => return Ok(()),
            },
            recv(refusals) -> refusal => match refusal {
                Ok(refusal) => {
                    let text = refusal.to_string();
                    write!(output, "Content-Length: {}\r\n\r\n{text}", text.len())?;
                    output.flush()?;
                }
                Err(_) => refused = None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    fn read_all(input: &str) -> (Vec<Message>, Vec<Value>, io::Result<()>) {
        let (to_server, from_client) = unbounded();
        let (refusals, refused) = unbounded();
        let result = read_messages(&mut input.as_bytes(), &to_server, &refusals);
        (
            from_client.try_iter().collect(),
            refused.try_iter().collect(),
            result,
        )
    }

    #[test]
    fn a_body_that_is_not_json_is_answered_and_the_next_message_served() {
        let input = framed("{not json")
            + &framed(r#"{"jsonrpc":"2.0","id":7,"method":7}"#)
            + &framed(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
        let (messages, refusals, result) = read_all(&input);
        assert!(result.is_ok());
        assert_eq!(messages.len(), 1);
        assert_eq!(refusals[0]["error"]["code"], PARSE_ERROR);
        assert_eq!(refusals[0]["id"], Value::Null);
        assert_eq!(refusals[1]["error"]["code"], INVALID_REQUEST);
        assert_eq!(refusals[1]["id"], 7);
    }

    #[test]
    fn a_message_over_the_limit_is_skipped_without_being_held() {
        let long = MAX_MESSAGE + 1;
        let mut input = format!("Content-Length: {long}\r\n\r\n").into_bytes();
        input.resize(input.len() + long as usize, b' ');
        input.extend_from_slice(framed(r#"{"jsonrpc":"2.0","method":"exit"}"#).as_bytes());
        let (to_server, from_client) = unbounded();
        let (refusals, refused) = unbounded();
        read_messages(&mut input.as_slice(), &to_server, &refusals).unwrap();
        let refusal: Vec<Value> = refused.try_iter().collect();
        assert!(refusal[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than"));
        assert!(
            matches!(from_client.try_recv(), Ok(Message::Notification(n)) if n.method == "exit")
        );
    }

    #[test]
    fn lengths_that_cannot_be_framed_end_the_session_with_a_reason() {
        for header in [
            "Content-Length: 18446744073709551616\r\n\r\n",
            "Content-Length: -1\r\n\r\n",
            "Content-Type: x\r\n\r\n{}",
        ] {
            let (messages, _, result) = read_all(header);
            assert!(messages.is_empty());
            let error = result.unwrap_err().to_string();
            assert!(error.contains("cannot be framed"), "{header}: {error}");
        }
        let huge_declared = "Content-Length: 18446744073709551615\r\n\r\n{}";
        let (_, _, result) = read_all(huge_declared);
        assert!(result.is_ok(), "skipped until the input ends");
    }
}
