//! wireoracle decodes, validates and re-encodes AGDX payloads with the
//! reference's published `laser-wire` crate, so laser-go's differential test
//! can compare its own decoder against the reference's on the same inputs.
//!
//! Input, one payload per line on stdin: `<mode> <hex>`, where mode is
//! `envelope`, `deadletter`, `errorbody`, `signature`, `card` or `bodyref`.
//! Output, one line per input, in order:
//!
//!   ok <re-encoded hex> <validation>   the payload decoded
//!   err <class> <detail>               it did not
//!
//! validation is the reference's `validate` of an envelope, `valid` or
//! `<missing|forbidden|too_large|invalid>:<field>`; `valid` or `invalid` from
//! the `validate` method of a signature, card or body ref; `-` for the
//! capsules without one. class is `eof` (input ended inside an item), `syntax` (not
//! well-formed at the head level), `recursion` (nesting limit), `trailing`
//! (bytes after the value), `semantic` (well-formed but not the type),
//! `encode` (decoded but would not re-encode) or `input` (a bad input line).

use std::io::{self, BufRead, BufWriter, Write};

use laser_wire::agent::{
    AgentCard, AgentDeadLetter, AgentEnvelope, AgentErrorBody, BodyRef, Signature, ValidateError,
    validate,
};
use laser_wire::error::DecodeError;
use laser_wire::framing::{decode_named, encode_named};

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut out = BufWriter::new(io::stdout().lock());
    for line in stdin.lock().lines() {
        let line = line?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        writeln!(out, "{}", answer(line))?;
        // One answer per question: the caller may wait for it before
        // asking the next (shrinking a failing case does).
        out.flush()?;
    }
    Ok(())
}

fn answer(line: &str) -> String {
    // An empty payload is a question too: its line is the mode alone.
    let (mode, hex) = line.split_once(' ').unwrap_or((line, ""));
    let Some(payload) = unhex(hex.trim()) else {
        return "err input bad hex".to_owned();
    };
    // A panic in the reference is an answer too, not a crash of the oracle.
    match std::panic::catch_unwind(|| run(mode, &payload)) {
        Ok(text) => text,
        Err(_) => "err panic reference panicked".to_owned(),
    }
}

fn run(mode: &str, payload: &[u8]) -> String {
    match mode {
        "envelope" => match decode_named::<AgentEnvelope>(payload) {
            Ok(envelope) => reencode(&envelope, &verdict(validate(&envelope))),
            Err(error) => rejected(&error),
        },
        "deadletter" => match decode_named::<AgentDeadLetter>(payload) {
            Ok(letter) => reencode(&letter, "-"),
            Err(error) => rejected(&error),
        },
        "errorbody" => match decode_named::<AgentErrorBody>(payload) {
            Ok(body) => reencode(&body, "-"),
            Err(error) => rejected(&error),
        },
        "signature" => match decode_named::<Signature>(payload) {
            Ok(signature) => reencode(&signature, valid_or_not(signature.validate())),
            Err(error) => rejected(&error),
        },
        "card" => match decode_named::<AgentCard>(payload) {
            Ok(card) => reencode(&card, valid_or_not(card.validate())),
            Err(error) => rejected(&error),
        },
        "bodyref" => match decode_named::<BodyRef>(payload) {
            Ok(reference) => reencode(&reference, valid_or_not(reference.validate())),
            Err(error) => rejected(&error),
        },
        other => format!("err input unknown mode {other}"),
    }
}

fn reencode<T: serde::Serialize>(value: &T, validation: &str) -> String {
    match encode_named(value) {
        Ok(bytes) => format!("ok {} {validation}", tohex(&bytes)),
        Err(error) => format!("err encode {}", oneline(&error.to_string())),
    }
}

fn verdict(result: Result<(), ValidateError>) -> String {
    match result {
        Ok(()) => "valid".to_owned(),
        Err(ValidateError::Missing { field, .. }) => format!("missing:{field}"),
        Err(ValidateError::Forbidden { field, .. }) => format!("forbidden:{field}"),
        Err(ValidateError::TooLarge { field, .. }) => {
            format!("too_large:{}", field.replace(' ', "_"))
        }
        Err(ValidateError::Invalid { field, .. }) => format!("invalid:{field}"),
        Err(_) => "invalid:unknown".to_owned(),
    }
}

fn valid_or_not(result: Result<(), ValidateError>) -> &'static str {
    if result.is_ok() { "valid" } else { "invalid" }
}

// decode_named renders ciborium's error with Debug, so its variant name leads.
fn rejected(error: &DecodeError) -> String {
    let text = error.to_string();
    let detail = text.strip_prefix("decode: ").unwrap_or(&text);
    let class = if detail.contains("trailing byte") {
        "trailing"
    } else if detail.starts_with("Io(") {
        "eof"
    } else if detail.starts_with("Syntax(") {
        "syntax"
    } else if detail.starts_with("RecursionLimitExceeded") {
        "recursion"
    } else {
        "semantic"
    };
    format!("err {class} {}", oneline(detail))
}

fn oneline(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn tohex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[(byte >> 4) as usize] as char);
        out.push(DIGITS[(byte & 0xf) as usize] as char);
    }
    out
}
