//! Flux durations as Windsor writes them into the blueprint (S10): a Go duration
//! (`90s`, `1h`, `2m30s`, `1.5h`) comes out in Go's canonical spelling (`1m30s`,
//! `1h0m0s`, `2m30s`, `1h30m0s`). Text that is not a duration is left as written
//! (it is reported where durations are checked, not here).

const UNITS: [(&str, u128); 8] = [
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// `text` in Go's canonical form, or `None` when it is not a Go duration.
pub fn canonical(text: &str) -> Option<String> {
    let (negative, nanos) = parse(text)?;
    let body = format(nanos);
    Some(if negative && nanos > 0 {
        format!("-{body}")
    } else {
        body
    })
}

/// Nanoseconds of a Go duration string (`[-+]?(\d*(\.\d*)?unit)+`, or `0`).
fn parse(text: &str) -> Option<(bool, u128)> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some((negative, 0));
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let number = &rest[..digits];
        rest = &rest[digits..];
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let (unit, scale) = UNITS
            .iter()
            .filter(|(u, _)| rest.starts_with(u))
            .max_by_key(|(u, _)| u.len())?;
        rest = &rest[unit.len()..];
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        let mut value = whole.checked_mul(*scale)?;
        // Fraction digits beyond nanosecond precision are dropped, as Go does.
        let mut place = *scale;
        for digit in fraction.chars() {
            place /= 10;
            value += u128::from(digit.to_digit(10)?) * place;
        }
        total = total.checked_add(value)?;
    }
    (total <= i64::MAX as u128).then_some((negative, total))
}

fn format(nanos: u128) -> String {
    if nanos == 0 {
        return "0s".to_string();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", decimal(nanos, 3));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", decimal(nanos, 6));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = nanos / 60_000_000_000 % 60;
    let seconds = decimal(nanos % 60_000_000_000, 9);
    if hours > 0 {
        format!("{hours}h{minutes}m{seconds}s")
    } else if minutes > 0 {
        format!("{minutes}m{seconds}s")
    } else {
        format!("{seconds}s")
    }
}

/// `value / 10^places` with the fraction's trailing zeros trimmed.
fn decimal(value: u128, places: u32) -> String {
    let scale = 10u128.pow(places);
    let fraction = value % scale;
    if fraction == 0 {
        return (value / scale).to_string();
    }
    let digits = format!("{fraction:0width$}", width = places as usize);
    format!("{}.{}", value / scale, digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn durations_come_out_as_go_spells_them() {
        for (written, go) in [
            ("5m", "5m0s"),
            ("90s", "1m30s"),
            ("1h", "1h0m0s"),
            ("2m30s", "2m30s"),
            ("1.5h", "1h30m0s"),
            ("300ms", "300ms"),
            ("1500ms", "1.5s"),
            ("0", "0s"),
            ("36h", "36h0m0s"),
            ("1us", "1µs"),
            ("-90s", "-1m30s"),
        ] {
            assert_eq!(canonical(written).as_deref(), Some(go), "{written}");
        }
    }

    #[test]
    fn text_that_is_not_a_duration_is_not_rewritten() {
        for text in [
            "",
            "5",
            "m",
            "5 m",
            "five minutes",
            "${interval}",
            "5x",
            ".",
        ] {
            assert_eq!(canonical(text), None, "{text}");
        }
    }
}
