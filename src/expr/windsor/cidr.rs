//! `cidrhost`, `cidrsubnet`, `cidrsubnets` and `cidrnetmask` for IPv4 and IPv6.
//!
//! Terraform's semantics with two Windsor quirks the conformance cases pin down:
//! `cidrsubnets` packs subnets one after another without aligning them, and a
//! subnet's offset is computed as a 64-bit size, so on IPv6 it is lost (becomes 0)
//! once a subnet holds 2^64 addresses or more (`cidrsubnet("fd00::/48", 16, 1)` is
//! `fd00::/64`).

use super::args;
use crate::expr::native::{Call, NativeError, NativeFn, Signature, Ty};
use crate::value::Value;
use std::net::{Ipv4Addr, Ipv6Addr};

pub const CIDRHOST: NativeFn = NativeFn {
    name: "cidrhost",
    sigs: &[Signature {
        params: &[Ty::Str, Ty::Int],
        variadic: None,
        ret: Ty::Str,
    }],
    call: cidrhost,
};

pub const CIDRSUBNET: NativeFn = NativeFn {
    name: "cidrsubnet",
    sigs: &[Signature {
        params: &[Ty::Str, Ty::Int, Ty::Int],
        variadic: None,
        ret: Ty::Str,
    }],
    call: cidrsubnet,
};

pub const CIDRSUBNETS: NativeFn = NativeFn {
    name: "cidrsubnets",
    sigs: &[Signature {
        params: &[Ty::Str],
        variadic: Some(Ty::Int),
        ret: Ty::List,
    }],
    call: cidrsubnets,
};

pub const CIDRNETMASK: NativeFn = NativeFn {
    name: "cidrnetmask",
    sigs: &[Signature {
        params: &[Ty::Str],
        variadic: None,
        ret: Ty::Str,
    }],
    call: cidrnetmask,
};

/// A parsed `address/length`, with the address already masked to the network.
#[derive(Debug, PartialEq)]
struct Prefix {
    network: u128,
    /// 32 for IPv4, 128 for IPv6.
    bits: u32,
    len: u32,
}

impl Prefix {
    /// Go's `net.ParseCIDR`: no zones, no signs or spaces in the length, and IPv4
    /// octets without leading zeros (Rust's parser rejects those as Go's does).
    fn parse(text: &str) -> Result<Prefix, NativeError> {
        let invalid =
            || NativeError::run(format!("invalid CIDR prefix: invalid CIDR address: {text}"));
        let (addr, len) = text.split_once('/').ok_or_else(invalid)?;
        let (address, bits) = if addr.contains(':') {
            let ip: Ipv6Addr = addr.parse().map_err(|_| invalid())?;
            (u128::from(ip), 128)
        } else {
            let ip: Ipv4Addr = addr.parse().map_err(|_| invalid())?;
            (u128::from(u32::from(ip)), 32)
        };
        if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        let len: u32 = len.parse().map_err(|_| invalid())?;
        if len > bits {
            return Err(invalid());
        }
        Ok(Prefix {
            network: address & mask(bits, len),
            bits,
            len,
        })
    }

    fn host_bits(&self) -> u32 {
        self.bits - self.len
    }

    fn contains(&self, address: u128) -> bool {
        address & mask(self.bits, self.len) == self.network
    }
}

/// The netmask of a `len`-bit prefix in a `bits`-bit address space.
fn mask(bits: u32, len: u32) -> u128 {
    let all = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    match bits - len {
        host if host >= 128 => 0,
        host => all & !((1u128 << host) - 1),
    }
}

/// Go's `net.IP.String`: dotted IPv4, RFC 5952 IPv6, IPv4-mapped IPv6 as dotted IPv4.
fn format_address(address: u128, bits: u32) -> String {
    if bits == 32 {
        return Ipv4Addr::from(address as u32).to_string();
    }
    let ip = Ipv6Addr::from(address);
    match ip.to_ipv4_mapped() {
        Some(v4) => v4.to_string(),
        None => ip.to_string(),
    }
}

/// Addresses in a subnet with `host_bits` host bits, as Windsor's 64-bit arithmetic
/// sees it: 0 from 2^64 up.
fn subnet_size(host_bits: u32) -> u64 {
    if host_bits >= 64 {
        0
    } else {
        1u64 << host_bits
    }
}

/// Adds an offset inside the address space (wrapping at its end, as fixed-width
/// address arithmetic does).
fn offset_address(prefix: &Prefix, offset: u128) -> u128 {
    prefix.network.wrapping_add(offset) & mask(prefix.bits, prefix.bits)
}

fn cidrhost(_: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    let text = args::string(arg(args, 0)?, "cidrhost() first argument")?;
    let host = args::integer(arg(args, 1)?, "cidrhost() second argument")?;
    host_address(text, host).map(Value::from)
}

fn host_address(text: &str, host: i64) -> Result<String, NativeError> {
    let prefix = Prefix::parse(text)?;
    if host < 0 {
        return Err(NativeError::run(format!(
            "host number {host} is out of range (must be non-negative) for CIDR {text}"
        )));
    }
    let host = host as u128;
    if prefix.bits == 32 {
        let max = (1u128 << prefix.host_bits()) - 1;
        if host > max {
            return Err(NativeError::run(format!(
                "host number {host} is out of range (0-{max}) for CIDR {text}"
            )));
        }
        return Ok(format_address(prefix.network + host, 32));
    }
    let address = prefix.network.wrapping_add(host);
    if address < prefix.network || !prefix.contains(address) {
        return Err(NativeError::run(format!(
            "host number {host} produces IP {} which is outside CIDR {text}",
            format_address(address, 128)
        )));
    }
    Ok(format_address(address, 128))
}

fn cidrsubnet(_: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    let text = args::string(arg(args, 0)?, "cidrsubnet() first argument")?;
    let newbits = args::integer(arg(args, 1)?, "cidrsubnet() second argument")?;
    let netnum = args::integer(arg(args, 2)?, "cidrsubnet() third argument")?;
    subnet(text, newbits, netnum).map(Value::from)
}

fn subnet(text: &str, newbits: i64, netnum: i64) -> Result<String, NativeError> {
    let prefix = Prefix::parse(text)?;
    let new_len = new_length(&prefix, newbits)
        .ok_or_else(|| invalid_newbits(&format!("newbits {newbits}"), text, &prefix))?;
    if netnum < 0 {
        return Err(NativeError::run(format!(
            "netnum {netnum} is out of range (must be non-negative) for newbits {newbits}"
        )));
    }
    // Every non-negative i64 fits in 63 or more new bits.
    if newbits < 63 && netnum >= 1i64 << newbits {
        return Err(NativeError::run(format!(
            "netnum {netnum} is out of range (0-{}) for newbits {newbits}",
            (1i64 << newbits) - 1
        )));
    }
    let offset = (netnum as u64).wrapping_mul(subnet_size(prefix.bits - new_len));
    let address = offset_address(&prefix, u128::from(offset));
    Ok(format!(
        "{}/{new_len}",
        format_address(address, prefix.bits)
    ))
}

fn cidrsubnets(_: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    if args.len() < 2 {
        return Err(NativeError::run(format!(
            "cidrsubnets() requires at least 2 arguments, got {}",
            args.len()
        )));
    }
    let text = args::string(arg(args, 0)?, "cidrsubnets() first argument")?;
    let mut newbits = Vec::with_capacity(args.len() - 1);
    for (i, v) in args[1..].iter().enumerate() {
        newbits.push(args::integer(v, &format!("cidrsubnets() newbits[{i}]"))?);
    }
    subnets(text, &newbits).map(|list| Value::list(list.into_iter().map(Value::from).collect()))
}

/// Consecutive subnets: each starts where the previous one ended, unaligned.
fn subnets(text: &str, newbits: &[i64]) -> Result<Vec<String>, NativeError> {
    let prefix = Prefix::parse(text)?;
    let mut offset: u128 = 0;
    let mut out = Vec::with_capacity(newbits.len());
    for (i, &bits) in newbits.iter().enumerate() {
        let new_len = new_length(&prefix, bits)
            .ok_or_else(|| invalid_newbits(&format!("newbits[{i}]={bits}"), text, &prefix))?;
        let address = offset_address(&prefix, offset);
        out.push(format!(
            "{}/{new_len}",
            format_address(address, prefix.bits)
        ));
        offset = offset.wrapping_add(u128::from(subnet_size(prefix.bits - new_len)));
    }
    Ok(out)
}

/// The prefix length after adding `newbits`, if that stays within the address.
fn new_length(prefix: &Prefix, newbits: i64) -> Option<u32> {
    let newbits = u32::try_from(newbits).ok()?;
    let len = prefix.len.checked_add(newbits)?;
    (len <= prefix.bits).then_some(len)
}

fn invalid_newbits(what: &str, text: &str, prefix: &Prefix) -> NativeError {
    NativeError::run(format!(
        "{what} is invalid for CIDR {text} (prefix length {}, total bits {})",
        prefix.len, prefix.bits
    ))
}

fn cidrnetmask(_: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    let text = args::string(arg(args, 0)?, "cidrnetmask() argument")?;
    netmask(text).map(Value::from)
}

fn netmask(text: &str) -> Result<String, NativeError> {
    let prefix = Prefix::parse(text)?;
    if prefix.bits != 32 {
        return Err(NativeError::run("CIDR prefix must be IPv4, got IPv6"));
    }
    Ok(format_address(mask(32, prefix.len), 32))
}

fn arg(args: &[Value], index: usize) -> Result<&Value, NativeError> {
    args.get(index)
        .ok_or_else(|| NativeError::run(format!("missing {} argument", args::ordinal(index))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err<T: std::fmt::Debug>(r: Result<T, NativeError>) -> String {
        match r {
            Ok(v) => format!("unexpected success: {v:?}"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn parses_like_go() {
        assert_eq!(
            Prefix::parse("10.1.2.3/16").map(|p| (p.network, p.bits, p.len)),
            Ok((0x0a01_0000, 32, 16))
        );
        for bad in [
            "10.0.0.0",
            "10.0.0.0/",
            "10.0.0.0/33",
            "10.0.0.0/+8",
            "10.0.0.0/ 8",
            "010.0.0.0/8",
            "fd00::/129",
            "fd00::%eth0/64",
            "10.0.0/8",
            "/8",
            "x/8",
            "10.0.0.0/99999999999999999999",
        ] {
            assert!(Prefix::parse(bad).is_err(), "{bad}");
        }
        assert!(Prefix::parse("10.0.0.0/0008").is_ok());
        assert!(Prefix::parse("::/0").is_ok());
    }

    #[test]
    fn hosts() {
        assert_eq!(host_address("10.0.0.0/8", 1).ok(), Some("10.0.0.1".into()));
        assert_eq!(host_address("10.0.0.7/32", 0).ok(), Some("10.0.0.7".into()));
        assert_eq!(
            host_address("0.0.0.0/0", 4294967295).ok(),
            Some("255.255.255.255".into())
        );
        assert_eq!(
            err(host_address("10.0.0.0/24", 256)),
            "host number 256 is out of range (0-255) for CIDR 10.0.0.0/24"
        );
        assert_eq!(
            err(host_address("10.0.0.0/24", -1)),
            "host number -1 is out of range (must be non-negative) for CIDR 10.0.0.0/24"
        );
    }

    #[test]
    fn ipv6_hosts() {
        assert_eq!(host_address("fd00::/64", 5).ok(), Some("fd00::5".into()));
        assert_eq!(
            host_address("2001:db8::/32", 0x1_0000_0000).ok(),
            Some("2001:db8::1:0:0".into())
        );
        assert_eq!(
            err(host_address("fd00::/120", 300)),
            "host number 300 produces IP fd00::12c which is outside CIDR fd00::/120"
        );
        // Past the end of the address space is outside too, not a wrap-around.
        assert!(host_address("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", 1).is_err());
        // IPv4-mapped addresses print as Go prints them.
        assert_eq!(
            host_address("::ffff:10.0.0.0/120", 2).ok(),
            Some("10.0.0.2".into())
        );
    }

    #[test]
    fn subnets_single() {
        assert_eq!(subnet("10.0.0.0/16", 8, 2).ok(), Some("10.0.2.0/24".into()));
        assert_eq!(subnet("10.0.0.0/16", 0, 0).ok(), Some("10.0.0.0/16".into()));
        assert_eq!(
            subnet("fd00::/56", 16, 3).ok(),
            Some("fd00::300:0:0:0/72".into())
        );
        // Windsor's 64-bit subnet size: a /64 out of a /56 loses its offset.
        assert_eq!(subnet("fd00::/56", 8, 3).ok(), Some("fd00::/64".into()));
        assert_eq!(subnet("fd00::/48", 16, 1).ok(), Some("fd00::/64".into()));
        assert_eq!(
            subnet("fd00::/64", 16, 1).ok(),
            Some("fd00::1:0:0:0/80".into())
        );
        assert_eq!(
            err(subnet("10.0.0.0/16", 17, 0)),
            "newbits 17 is invalid for CIDR 10.0.0.0/16 (prefix length 16, total bits 32)"
        );
        assert_eq!(
            err(subnet("10.0.0.0/16", 8, 256)),
            "netnum 256 is out of range (0-255) for newbits 8"
        );
        // Large IPv6 newbits take any non-negative netnum without overflowing.
        assert!(subnet("::/0", 100, i64::MAX).is_ok());
        assert!(subnet("::/0", 129, 0).is_err());
        assert!(subnet("::/0", i64::MIN, 0).is_err());
    }

    #[test]
    fn subnets_packed() {
        assert_eq!(
            subnets("10.0.0.0/16", &[8, 8, 4]).ok(),
            Some(vec![
                "10.0.0.0/24".into(),
                "10.0.1.0/24".into(),
                "10.0.2.0/20".into()
            ])
        );
        assert_eq!(
            err(subnets("10.0.0.0/16", &[8, 20])),
            "newbits[1]=20 is invalid for CIDR 10.0.0.0/16 (prefix length 16, total bits 32)"
        );
        assert_eq!(
            subnets("fd00::/56", &[8, 8]).ok(),
            Some(vec!["fd00::/64".into(), "fd00::/64".into()])
        );
        assert_eq!(
            subnets("fd00::/56", &[72, 72]).ok(),
            Some(vec!["fd00::/128".into(), "fd00::1/128".into()])
        );
    }

    #[test]
    fn netmasks() {
        assert_eq!(netmask("10.0.0.0/16").ok(), Some("255.255.0.0".into()));
        assert_eq!(netmask("0.0.0.0/0").ok(), Some("0.0.0.0".into()));
        assert_eq!(netmask("1.2.3.4/32").ok(), Some("255.255.255.255".into()));
        assert_eq!(
            err(netmask("fd00::/64")),
            "CIDR prefix must be IPv4, got IPv6"
        );
    }
}
