//! Failed authentication, limited per client address (`docs/API.md`
//! §9.5): a burst of [`BURST`] failures, then one more every
//! [`REFILL`]; past that, 429 without looking at the credential. Loopback
//! clients are exempt. Behind a proxy the client is the address
//! `X-Forwarded-For` names, believed only from `trusted_proxies`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures a client may have before it is limited.
pub const BURST: f64 = 10.0;
/// The time that gives a limited client one more try.
pub const REFILL: Duration = Duration::from_secs(6);
/// Addresses remembered before fully refilled ones are forgotten.
const MAX_CLIENTS: usize = 4096;

/// An address or an `address/prefix` range, for `trusted_proxies`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpRange {
    address: IpAddr,
    prefix: u8,
}

impl IpRange {
    /// Whether `ip` is in the range (an IPv4 address in its IPv6-mapped
    /// form counts as itself).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match (self.address, ip) {
            (IpAddr::V4(range), IpAddr::V4(ip)) => {
                masked(u32::from(range).into(), self.prefix, 32)
                    == masked(u32::from(ip).into(), self.prefix, 32)
            }
            (IpAddr::V6(range), IpAddr::V6(ip)) => {
                masked(u128::from(range), self.prefix, 128)
                    == masked(u128::from(ip), self.prefix, 128)
            }
            _ => false,
        }
    }
}

fn masked(bits: u128, prefix: u8, width: u8) -> u128 {
    if prefix == 0 {
        return 0;
    }
    bits >> (width - prefix)
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

impl FromStr for IpRange {
    type Err = ();

    fn from_str(text: &str) -> Result<IpRange, ()> {
        let (address, prefix) = match text.trim().split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text.trim(), None),
        };
        let address = canonical(address.parse::<IpAddr>().map_err(|_| ())?);
        let width = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(prefix) => prefix.parse::<u8>().map_err(|_| ())?,
            None => width,
        };
        if prefix > width {
            return Err(());
        }
        Ok(IpRange { address, prefix })
    }
}

/// The client of a request that came from `peer`: the peer itself, or,
/// when the peer is a trusted proxy, the nearest address of
/// `X-Forwarded-For` (read right to left) that is not one.
pub fn client_address(
    peer: Option<IpAddr>,
    forwarded_for: &[&str],
    trusted: &[IpRange],
) -> Option<IpAddr> {
    let peer = canonical(peer?);
    let is_trusted = |ip: IpAddr| trusted.iter().any(|range| range.contains(ip));
    if !is_trusted(peer) {
        return Some(peer);
    }
    let mut client = peer;
    let hops = forwarded_for
        .iter()
        .rev()
        .flat_map(|header| header.rsplit(','))
        .map(str::trim);
    for hop in hops {
        let Ok(ip) = hop.parse::<IpAddr>() else {
            // An unreadable hop: the last one we could believe is it.
            break;
        };
        client = canonical(ip);
        if !is_trusted(client) {
            break;
        }
    }
    Some(client)
}

/// The failures of each client address, as a token bucket.
#[derive(Debug, Default)]
pub struct FailedAuth {
    clients: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl FailedAuth {
    /// Whether `client` may try now: loopback always; others until their
    /// burst is spent.
    pub fn may_try(&self, client: Option<IpAddr>) -> bool {
        let Some(client) = client.filter(|ip| !ip.is_loopback()) else {
            return true;
        };
        let clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        match clients.get(&client) {
            Some(&(left, since)) => refilled(left, since, Instant::now()) >= 1.0,
            None => true,
        }
    }

    /// Counts a failure of `client`; true when this one spent the burst
    /// (worth a log line: later ones are not logged).
    pub fn failed(&self, client: Option<IpAddr>) -> bool {
        let Some(client) = client.filter(|ip| !ip.is_loopback()) else {
            return false;
        };
        let now = Instant::now();
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if clients.len() >= MAX_CLIENTS {
            clients.retain(|_, &mut (left, since)| refilled(left, since, now) < BURST);
        }
        let entry = clients.entry(client).or_insert((BURST, now));
        let left = refilled(entry.0, entry.1, now) - 1.0;
        *entry = (left.max(0.0), now);
        left < 1.0
    }
}

fn refilled(left: f64, since: Instant, now: Instant) -> f64 {
    let gained = now.duration_since(since).as_secs_f64() / REFILL.as_secs_f64();
    (left + gained).min(BURST)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ranges_parse_and_match() {
        let range: IpRange = "10.1.0.0/16".parse().unwrap();
        assert!(range.contains(ip("10.1.200.3")));
        assert!(!range.contains(ip("10.2.0.1")));
        assert!(range.contains(ip("::ffff:10.1.0.9")));
        let one: IpRange = "192.168.1.5".parse().unwrap();
        assert!(one.contains(ip("192.168.1.5")));
        assert!(!one.contains(ip("192.168.1.6")));
        let v6: IpRange = "fd00::/8".parse().unwrap();
        assert!(v6.contains(ip("fd12::1")));
        assert!(!v6.contains(ip("fe80::1")));
        let all: IpRange = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("8.8.8.8")));
        for bad in ["10.0.0.0/33", "x", "10.0.0.1/", "::/129"] {
            assert!(bad.parse::<IpRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn forwarded_for_counts_only_from_trusted_proxies() {
        let trusted = ["127.0.0.1".parse().unwrap(), "10.0.0.0/8".parse().unwrap()];
        let peer = Some(ip("127.0.0.1"));
        // The client a trusted proxy names; a spoofed entry further left
        // is never reached.
        assert_eq!(
            client_address(peer, &["6.6.6.6, 203.0.113.9"], &trusted),
            Some(ip("203.0.113.9"))
        );
        // Through two trusted proxies.
        assert_eq!(
            client_address(peer, &["203.0.113.9", "10.0.0.2"], &trusted),
            Some(ip("203.0.113.9"))
        );
        // An untrusted peer's header is ignored.
        assert_eq!(
            client_address(Some(ip("198.51.100.1")), &["127.0.0.1"], &trusted),
            Some(ip("198.51.100.1"))
        );
        // No header: the proxy itself.
        assert_eq!(client_address(peer, &[], &trusted), peer);
        assert_eq!(client_address(peer, &["junk"], &trusted), peer);
        assert_eq!(client_address(peer, &["203.0.113.9"], &[]), peer);
    }

    #[test]
    fn a_burst_then_limited_and_loopback_never() {
        let limit = FailedAuth::default();
        let client = Some(ip("203.0.113.7"));
        for _ in 0..9 {
            assert!(limit.may_try(client));
            assert!(!limit.failed(client));
        }
        assert!(limit.may_try(client));
        assert!(limit.failed(client), "the tenth failure spends the burst");
        assert!(!limit.may_try(client));
        assert!(limit.may_try(Some(ip("203.0.113.8"))));
        let local = Some(ip("127.0.0.1"));
        for _ in 0..20 {
            assert!(!limit.failed(local));
        }
        assert!(limit.may_try(local));
        assert!(limit.may_try(None));
    }
}
