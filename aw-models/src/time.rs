//! Timestamps and durations as nanosecond integers.
//!
//! The store keeps event start and end as `i64` nanoseconds since the Unix
//! epoch (as aw-server-rust does), so these types hold exactly that and
//! refuse anything outside it when parsed. Arithmetic in the query
//! transforms is then plain integer arithmetic with no rounding.

use std::fmt;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

use crate::ModelError;

const NANOS_PER_SEC: i64 = 1_000_000_000;

/// An instant in UTC, in nanoseconds since the Unix epoch.
///
/// Parsed from RFC 3339 with any UTC offset; written as UTC with `Z` and the
/// fraction only when non-zero (`2021-06-01T10:00:00.5Z`), in groups of 3,
/// 6 or 9 digits as the reference server does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The earliest storable instant (1677-09-21).
    pub const MIN: Timestamp = Timestamp(i64::MIN);
    /// The latest storable instant (2262-04-11).
    pub const MAX: Timestamp = Timestamp(i64::MAX);

    /// The instant `nanos` nanoseconds after the Unix epoch.
    pub const fn from_nanos(nanos: i64) -> Timestamp {
        Timestamp(nanos)
    }

    /// Nanoseconds since the Unix epoch.
    pub const fn nanos(self) -> i64 {
        self.0
    }

    /// The current time.
    pub fn now() -> Timestamp {
        // Utc::now() is inside the i64 range until 2262.
        Timestamp::from_datetime(Utc::now()).unwrap_or(Timestamp::MAX)
    }

    /// Converts a chrono time, refusing instants the store cannot hold.
    pub fn from_datetime(datetime: DateTime<Utc>) -> Result<Timestamp, ModelError> {
        datetime
            .timestamp_nanos_opt()
            .map(Timestamp)
            .ok_or_else(|| ModelError::TimestampOutOfRange(datetime.to_rfc3339()))
    }

    /// The same instant as a chrono time.
    pub fn to_datetime(self) -> DateTime<Utc> {
        Utc.timestamp_nanos(self.0)
    }

    /// Parses RFC 3339 with a mandatory offset (`Z`, `+02:00`, `-05:30`);
    /// lowercase `t`/`z` and a space instead of `T` are accepted too.
    pub fn parse(text: &str) -> Result<Timestamp, ModelError> {
        let parsed = DateTime::parse_from_rfc3339(text.trim())
            .map_err(|_| ModelError::InvalidTimestamp(text.to_string()))?;
        parsed
            .timestamp_nanos_opt()
            .map(Timestamp)
            .ok_or_else(|| ModelError::TimestampOutOfRange(text.to_string()))
    }

    /// RFC 3339 in UTC with a `+00:00` offset, as `TIMEINTERVAL` spells it.
    pub fn to_rfc3339_offset(self) -> String {
        self.to_datetime()
            .to_rfc3339_opts(SecondsFormat::AutoSi, false)
    }

    /// `self + duration`, or `None` past the storable range.
    pub fn checked_add(self, duration: Duration) -> Option<Timestamp> {
        self.0.checked_add(duration.0).map(Timestamp)
    }

    /// `self + duration`, clamped to the storable range.
    pub fn saturating_add(self, duration: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(duration.0))
    }

    /// `self - duration`, clamped to the storable range.
    pub fn saturating_sub(self, duration: Duration) -> Timestamp {
        Timestamp(self.0.saturating_sub(duration.0))
    }

    /// The signed time from `earlier` to `self`.
    pub fn duration_since(self, earlier: Timestamp) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

/// RFC 3339 in UTC with a `Z`, the fraction as chrono's
/// `SecondsFormat::AutoSi` writes it (none, or 3, 6 or 9 digits: the
/// fewest that keep every non-zero digit). Written by hand into a stack
/// buffer: event listings print two timestamps per event, and chrono's
/// formatter allocates and was a visible part of a listing's time.
impl fmt::Display for Timestamp {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NANOS_PER_DAY: i64 = 86_400 * 1_000_000_000;
        let days = self.0.div_euclid(NANOS_PER_DAY);
        let of_day = self.0.rem_euclid(NANOS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        let secs = of_day / 1_000_000_000;
        let nanos = of_day % 1_000_000_000;
        let mut buffer = [0u8; 30];
        let mut put = |at: usize, value: i64, width: usize| {
            let mut value = value;
            for index in (at..at + width).rev() {
                buffer[index] = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        // i64 nanoseconds span the years 1677-2262: always four digits.
        put(0, year, 4);
        put(5, month, 2);
        put(8, day, 2);
        put(11, secs / 3600, 2);
        put(14, secs / 60 % 60, 2);
        put(17, secs % 60, 2);
        let mut len = 19;
        let (digits, fraction) = match nanos {
            0 => (0, 0),
            n if n % 1_000_000 == 0 => (3, n / 1_000_000),
            n if n % 1_000 == 0 => (6, n / 1_000),
            n => (9, n),
        };
        if digits > 0 {
            put(20, fraction, digits);
            len = 20 + digits;
        }
        buffer[4] = b'-';
        buffer[7] = b'-';
        buffer[10] = b'T';
        buffer[13] = b':';
        buffer[16] = b':';
        if digits > 0 {
            buffer[19] = b'.';
        }
        buffer[len] = b'Z';
        // Only ASCII digits and separators were written.
        formatter.write_str(std::str::from_utf8(&buffer[..=len]).map_err(|_| fmt::Error)?)
    }
}

/// (year, month, day) of a day count since 1970-01-01 in the proleptic
/// Gregorian calendar (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Timestamp;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an RFC 3339 timestamp with a UTC offset")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Timestamp, E> {
                Timestamp::parse(text).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

/// A length of time in nanoseconds, written as float seconds.
///
/// Signed, because transforms subtract times; what clients send is
/// validated to be finite, non-negative and below `i64::MAX` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(i64);

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration(0);

    /// A duration of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: i64) -> Duration {
        Duration(nanos)
    }

    /// Whole seconds.
    pub const fn from_secs(secs: i64) -> Duration {
        Duration(secs.saturating_mul(NANOS_PER_SEC))
    }

    /// Milliseconds.
    pub const fn from_millis(millis: i64) -> Duration {
        Duration(millis.saturating_mul(1_000_000))
    }

    /// Nanoseconds.
    pub const fn nanos(self) -> i64 {
        self.0
    }

    /// Validates client input in seconds, rounding to the nanosecond.
    pub fn from_secs_f64(secs: f64) -> Result<Duration, ModelError> {
        let nanos = (secs * NANOS_PER_SEC as f64).round();
        // 2^63 is exactly representable; anything at or above it overflows.
        if secs.is_finite() && secs >= 0.0 && nanos < 9_223_372_036_854_775_808.0 {
            Ok(Duration(nanos as i64))
        } else {
            Err(ModelError::InvalidDuration(secs.to_string()))
        }
    }

    /// Seconds as a float (exact below about 104 days).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// `self + other`, clamped.
    pub fn saturating_add(self, other: Duration) -> Duration {
        Duration(self.0.saturating_add(other.0))
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_secs_f64())
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let secs = f64::deserialize(deserializer)?;
        Duration::from_secs_f64(secs).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_chronos_rfc3339_with_auto_fraction() {
        let chrono_text = |nanos: i64| {
            Timestamp::from_nanos(nanos)
                .to_datetime()
                .to_rfc3339_opts(SecondsFormat::AutoSi, true)
        };
        let mut cases = vec![
            0,
            -1,
            1,
            i64::MIN,
            i64::MAX,
            951_782_400 * 1_000_000_000,                 // 2000-02-29
            -2_208_988_800 * 1_000_000_000,              // 1900-01-01
            1_622_538_000_123_000_000,                   // millis
            1_622_538_000_123_456_000,                   // micros
            1_622_538_000_123_456_789,                   // nanos
            4_107_542_399 * 1_000_000_000 + 999_999_999, // 2100-02-28T23:59:59.999999999
        ];
        // SplitMix64: values over the whole range, and at second, milli
        // and micro precision.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let value = (z ^ (z >> 31)) as i64;
            cases.extend([
                value,
                value / 1_000_000_000 * 1_000_000_000,
                value / 1_000 * 1_000,
            ]);
            cases.push(value / 1_000_000 * 1_000_000);
        }
        for nanos in cases {
            assert_eq!(
                Timestamp::from_nanos(nanos).to_string(),
                chrono_text(nanos),
                "{nanos}"
            );
        }
    }

    #[test]
    fn timestamps_parse_any_offset_into_utc() {
        let cases = [
            ("2021-06-01T10:00:00Z", "2021-06-01T10:00:00Z"),
            ("2021-06-01T12:00:00+02:00", "2021-06-01T10:00:00Z"),
            ("2021-06-01T04:30:00-05:30", "2021-06-01T10:00:00Z"),
            ("2021-06-01T10:00:00.5Z", "2021-06-01T10:00:00.500Z"),
            (
                "2021-06-01T10:00:00.123456+00:00",
                "2021-06-01T10:00:00.123456Z",
            ),
            (
                "2021-06-01T10:00:00.123456789Z",
                "2021-06-01T10:00:00.123456789Z",
            ),
            ("2021-06-01t10:00:00z", "2021-06-01T10:00:00Z"),
            ("2021-06-01 10:00:00Z", "2021-06-01T10:00:00Z"),
        ];
        for (input, expected) in cases {
            let parsed = Timestamp::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(parsed.to_string(), expected, "{input}");
        }
    }

    #[test]
    fn timestamps_without_offset_or_out_of_range_are_errors() {
        for input in ["2021-06-01T10:00:00", "2021-06-01", "yesterday", "", "1e9"] {
            assert!(
                matches!(
                    Timestamp::parse(input),
                    Err(ModelError::InvalidTimestamp(_))
                ),
                "{input}"
            );
        }
        for input in [
            "1600-01-01T00:00:00Z",
            "2300-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
        ] {
            assert!(
                matches!(
                    Timestamp::parse(input),
                    Err(ModelError::TimestampOutOfRange(_))
                ),
                "{input}"
            );
        }
    }

    #[test]
    fn timestamp_offset_form_is_utc_plus_zero() {
        let parsed = Timestamp::parse("2021-06-01T12:00:00+02:00").unwrap();
        assert_eq!(parsed.to_rfc3339_offset(), "2021-06-01T10:00:00+00:00");
    }

    #[test]
    fn durations_round_trip_as_float_seconds() {
        for (secs, nanos) in [
            (0.0, 0),
            (1.5, 1_500_000_000),
            (0.001, 1_000_000),
            (259200.0, 259_200_000_000_000),
        ] {
            let duration = Duration::from_secs_f64(secs).unwrap();
            assert_eq!(duration.nanos(), nanos);
            assert_eq!(duration.as_secs_f64(), secs);
        }
    }

    #[test]
    fn bad_durations_are_errors_not_panics() {
        for secs in [
            -1.0,
            -0.0000000001,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e10,
            9.3e9,
        ] {
            assert!(Duration::from_secs_f64(secs).is_err(), "{secs}");
        }
        // Just below 2^63 ns (about 292 years) is still fine.
        assert!(Duration::from_secs_f64(9.2e9).is_ok());
    }

    #[test]
    fn serde_shapes() {
        let ts: Timestamp = serde_json::from_str("\"2021-06-01T10:00:00.5+01:00\"").unwrap();
        assert_eq!(
            serde_json::to_string(&ts).unwrap(),
            "\"2021-06-01T09:00:00.500Z\""
        );
        let duration: Duration = serde_json::from_str("12").unwrap();
        assert_eq!(serde_json::to_string(&duration).unwrap(), "12.0");
        assert!(serde_json::from_str::<Duration>("-3").is_err());
        assert!(serde_json::from_str::<Timestamp>("12").is_err());
    }
}
