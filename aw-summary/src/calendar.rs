//! Days, weeks, months and hours as the user sees them: in an IANA time
//! zone, a day starting at the `startOfDay` setting (aw-webui's, `"04:00"`
//! by default: a night's work belongs to the day before) and a week at
//! `startOfWeek` (`"Monday"` by default). A day is the span from one day's
//! start to the next one's, so the day that daylight saving shortens has
//! 23 hours and the one it lengthens 25.

use aw_models::{SettingValue, Timestamp};
use jiff::civil::{Date, DateTime, Weekday};
use jiff::tz::TimeZone;

use aw_models::summary::ArgumentError;

/// The calendar of one summary.
#[derive(Debug, Clone)]
pub struct Calendar {
    zone: TimeZone,
    /// The zone's IANA name, as the caller gave it or the system's.
    name: String,
    /// When a day starts, in minutes after local midnight.
    day_start: i32,
    week_start: Weekday,
}

/// One day of a summary: its date and where it starts and ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Day {
    /// The date the day is named by.
    pub date: Date,
    /// Its first instant (or the summary's start, if later).
    pub start: Timestamp,
    /// Its end, exclusive (or the summary's end, if earlier).
    pub end: Timestamp,
}

impl Calendar {
    /// The calendar of `tz` (an IANA name; `None`: the server's zone) and
    /// the `startOfDay` and `startOfWeek` settings; unusable settings fall
    /// back to the defaults, as aw-webui does.
    pub fn new(
        tz: Option<&str>,
        start_of_day: Option<&SettingValue>,
        start_of_week: Option<&SettingValue>,
    ) -> Result<Calendar, ArgumentError> {
        let (zone, name) = match tz.map(str::trim) {
            Some(name) => {
                let zone = TimeZone::get(name).map_err(|_| {
                    ArgumentError::new(
                        "tz",
                        format!("'{name}' is not an IANA time zone name (e.g. Europe/Berlin)"),
                    )
                })?;
                (zone, name.to_string())
            }
            None => {
                let zone = TimeZone::system();
                let name = zone.iana_name().unwrap_or("UTC").to_string();
                (zone, name)
            }
        };
        let day_start = start_of_day
            .and_then(SettingValue::as_str)
            .and_then(parse_clock)
            .unwrap_or(4 * 60);
        let week_start = match start_of_week.and_then(SettingValue::as_str) {
            Some(day) if day.eq_ignore_ascii_case("sunday") => Weekday::Sunday,
            Some(day) if day.eq_ignore_ascii_case("saturday") => Weekday::Saturday,
            _ => Weekday::Monday,
        };
        Ok(Calendar {
            zone,
            name,
            day_start,
            week_start,
        })
    }

    /// The zone's name.
    pub fn zone_name(&self) -> &str {
        &self.name
    }

    /// The first instant of the day named `date`.
    pub fn day_start(&self, date: Date) -> Timestamp {
        let local =
            DateTime::from(date) + jiff::SignedDuration::from_mins(i64::from(self.day_start));
        // A start inside a daylight-saving gap moves forward, as clocks do.
        let instant = self
            .zone
            .to_ambiguous_zoned(local)
            .compatible()
            .map(|zoned| zoned.timestamp())
            .unwrap_or(jiff::Timestamp::MAX);
        from_jiff(instant)
    }

    /// The date of the day `instant` falls in.
    pub fn date_of(&self, instant: Timestamp) -> Date {
        let local = to_jiff(instant).to_zoned(self.zone.clone()).datetime();
        let shifted = local - jiff::SignedDuration::from_mins(i64::from(self.day_start));
        shifted.date()
    }

    /// The local clock hour (0-23) at `instant`, and the next instant at
    /// which the clock shows a new hour: one zone conversion for both.
    pub fn hour_at(&self, instant: Timestamp) -> (i8, Timestamp) {
        let zoned = to_jiff(instant).to_zoned(self.zone.clone());
        let into_hour = i64::from(zoned.minute()) * 60 + i64::from(zoned.second());
        let nanos_into_hour = into_hour * 1_000_000_000 + i64::from(zoned.subsec_nanosecond());
        let next = Timestamp::from_nanos(
            instant
                .nanos()
                .saturating_add(3_600_000_000_000 - nanos_into_hour),
        );
        (zoned.hour(), next)
    }

    /// The local clock's date at `instant` (from midnight, whatever
    /// `startOfDay` says).
    pub fn clock_date(&self, instant: Timestamp) -> Date {
        to_jiff(instant).to_zoned(self.zone.clone()).date()
    }

    /// The instant the local clock shows `hour:minute` on `date` (moved
    /// forward out of a daylight-saving gap, as clocks are).
    pub fn clock_time(&self, date: Date, hour: u8, minute: u8) -> Timestamp {
        let local = DateTime::from(date)
            + jiff::SignedDuration::from_mins(i64::from(hour) * 60 + i64::from(minute));
        let instant = self
            .zone
            .to_ambiguous_zoned(local)
            .compatible()
            .map(|zoned| zoned.timestamp())
            .unwrap_or(jiff::Timestamp::MAX);
        from_jiff(instant)
    }

    /// Today's date, as [`Calendar::date_of`] names it.
    pub fn today(&self) -> Date {
        self.date_of(Timestamp::now())
    }

    /// The local clock time at `instant`, `HH:MM`.
    pub fn clock(&self, instant: Timestamp) -> String {
        let local = to_jiff(instant).to_zoned(self.zone.clone());
        format!("{:02}:{:02}", local.hour(), local.minute())
    }

    /// The first day of the week `date` is in.
    pub fn week_of(&self, date: Date) -> Date {
        let back = (date.weekday().to_monday_zero_offset()
            - self.week_start.to_monday_zero_offset())
        .rem_euclid(7);
        date.checked_sub(jiff::Span::new().days(i64::from(back)))
            .unwrap_or(date)
    }

    /// The days of `[start, end)`, the first and last cut to it.
    pub fn days(&self, start: Timestamp, end: Timestamp) -> Vec<Day> {
        let mut days = Vec::new();
        let mut date = self.date_of(start);
        let mut from = start;
        while from < end {
            let next_date = date.tomorrow().unwrap_or(date);
            let next = self.day_start(next_date).min(end);
            if next <= from {
                break;
            }
            days.push(Day {
                date,
                start: from,
                end: next,
            });
            from = next;
            date = next_date;
        }
        days
    }

    /// `start`/`end` of a request: a date (`2026-11-27`, `today`,
    /// `yesterday`, `tomorrow`: the start of that day) or an RFC 3339 time.
    pub fn parse_time(
        &self,
        argument: &'static str,
        text: &str,
    ) -> Result<Timestamp, ArgumentError> {
        let text = text.trim();
        let date = match self.relative_date(text) {
            Some(date) => Some(date),
            None if text.len() == 10 => text.parse::<Date>().ok(),
            None => None,
        };
        if let Some(date) = date {
            let start = self.day_start(date);
            if start == Timestamp::MIN || start == Timestamp::MAX {
                return Err(ArgumentError::new(
                    argument,
                    format!("'{text}' is outside the years 1678-2261"),
                ));
            }
            return Ok(start);
        }
        Timestamp::parse(text).map_err(|_| {
            ArgumentError::new(
                argument,
                format!(
                    "'{text}' is neither a date (YYYY-MM-DD, today, yesterday or tomorrow) \
                     nor an RFC 3339 time (YYYY-MM-DDTHH:MM:SS+01:00)"
                ),
            )
        })
    }
}

/// `date` moved by `days`.
pub fn add_days(date: Date, days: i64) -> Date {
    date.checked_add(jiff::Span::new().days(days))
        .unwrap_or(date)
}

/// The first day of the month after `date`'s.
pub fn next_month(date: Date) -> Date {
    date.first_of_month()
        .checked_add(jiff::Span::new().months(1))
        .unwrap_or(date)
}

impl Calendar {
    /// A date argument: `YYYY-MM-DD`, or `today`, `yesterday` or
    /// `tomorrow` (any letter case) by this calendar's days.
    pub fn parse_date(&self, argument: &'static str, text: &str) -> Result<Date, ArgumentError> {
        let text = text.trim();
        self.relative_date(text)
            .or_else(|| text.parse::<Date>().ok())
            .ok_or_else(|| {
                ArgumentError::new(
                    argument,
                    format!("'{text}' is not a date: YYYY-MM-DD, today, yesterday or tomorrow"),
                )
            })
    }

    /// The date `today`, `yesterday` or `tomorrow` names: the day (from
    /// the start of day, in this calendar's zone) that holds now, or the
    /// one before or after it.
    fn relative_date(&self, text: &str) -> Option<Date> {
        let shift = RELATIVE_DATES
            .iter()
            .find(|(word, _)| word.eq_ignore_ascii_case(text))?
            .1;
        Some(add_days(self.today(), shift))
    }
}

/// The words a date argument may be instead of a date, and their shift
/// from today in days.
pub const RELATIVE_DATES: [(&str, i64); 3] = [("today", 0), ("yesterday", -1), ("tomorrow", 1)];

/// `"HH:MM"` in minutes after midnight.
fn parse_clock(text: &str) -> Option<i32> {
    let (hours, minutes) = text.trim().split_once(':')?;
    let hours: i32 = hours.parse().ok()?;
    let minutes: i32 = minutes.parse().ok()?;
    ((0..24).contains(&hours) && (0..60).contains(&minutes)).then_some(hours * 60 + minutes)
}

fn to_jiff(instant: Timestamp) -> jiff::Timestamp {
    jiff::Timestamp::from_nanosecond(i128::from(instant.nanos())).unwrap_or(jiff::Timestamp::MAX)
}

/// Instants outside [`Timestamp`]'s range become its `MIN` or `MAX`.
fn from_jiff(instant: jiff::Timestamp) -> Timestamp {
    let nanos = instant.as_nanosecond();
    match i64::try_from(nanos) {
        Ok(nanos) => Timestamp::from_nanos(nanos),
        Err(_) if nanos < 0 => Timestamp::MIN,
        Err(_) => Timestamp::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calendar(tz: &str) -> Calendar {
        let day = SettingValue::from("04:00");
        Calendar::new(Some(tz), Some(&day), None).unwrap()
    }

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn a_day_starts_at_the_start_of_day_setting_in_the_zone() {
        let berlin = calendar("Europe/Berlin");
        let date = berlin.parse_date("day", "2026-11-27").unwrap();
        assert_eq!(berlin.day_start(date), at("2026-11-27T03:00:00Z"));
        // 02:00 local is still the day before.
        assert_eq!(berlin.date_of(at("2026-11-28T01:00:00Z")), date);
        assert_eq!(
            berlin.date_of(at("2026-11-28T03:00:00Z")),
            date.tomorrow().unwrap()
        );
    }

    #[test]
    fn today_yesterday_and_tomorrow_are_dates_of_the_calendars_days() {
        let berlin = calendar("Europe/Berlin");
        let today = berlin.today();
        assert_eq!(berlin.parse_date("day", "Today").unwrap(), today);
        assert_eq!(
            berlin.parse_date("day", " yesterday ").unwrap(),
            add_days(today, -1)
        );
        assert_eq!(
            berlin.parse_date("day", "TOMORROW").unwrap(),
            add_days(today, 1)
        );
        assert_eq!(
            berlin.parse_time("start", "yesterday").unwrap(),
            berlin.day_start(add_days(today, -1))
        );
        let message = berlin.parse_date("day", "someday").unwrap_err().to_string();
        assert_eq!(
            message,
            "day: 'someday' is not a date: YYYY-MM-DD, today, yesterday or tomorrow"
        );
    }

    #[test]
    fn daylight_saving_days_have_23_and_25_hours() {
        let berlin = calendar("Europe/Berlin");
        let hours = |date: &str| {
            let date = berlin.parse_date("day", date).unwrap();
            let start = berlin.day_start(date);
            let end = berlin.day_start(date.tomorrow().unwrap());
            end.duration_since(start).as_secs_f64() / 3600.0
        };
        assert_eq!(hours("2026-03-28"), 23.0);
        assert_eq!(hours("2026-10-24"), 25.0);
        assert_eq!(hours("2026-11-27"), 24.0);
    }

    #[test]
    fn days_cut_the_period_at_each_day_start() {
        let utc = calendar("UTC");
        let days = utc.days(at("2026-11-27T10:00:00Z"), at("2026-11-29T05:00:00Z"));
        let starts: Vec<_> = days.iter().map(|d| d.start).collect();
        assert_eq!(
            starts,
            [
                at("2026-11-27T10:00:00Z"),
                at("2026-11-28T04:00:00Z"),
                at("2026-11-29T04:00:00Z")
            ]
        );
        assert_eq!(days[2].end, at("2026-11-29T05:00:00Z"));
        assert_eq!(days[0].date.to_string(), "2026-11-27");
    }

    #[test]
    fn weeks_start_on_the_setting_day() {
        let sunday = SettingValue::from("Sunday");
        let us = Calendar::new(Some("UTC"), None, Some(&sunday)).unwrap();
        let eu = calendar("UTC");
        let friday = eu.parse_date("week", "2026-11-27").unwrap();
        assert_eq!(eu.week_of(friday).to_string(), "2026-11-23");
        assert_eq!(us.week_of(friday).to_string(), "2026-11-22");
    }

    #[test]
    fn hours_follow_the_local_clock() {
        let kolkata = calendar("Asia/Kolkata");
        let instant = at("2026-11-27T03:40:00Z"); // 09:10 local
        assert_eq!(kolkata.hour_at(instant), (9, at("2026-11-27T04:30:00Z")));
    }

    #[test]
    fn bad_zones_and_times_name_their_argument() {
        let error = Calendar::new(Some("Mars/Olympus"), None, None).unwrap_err();
        assert_eq!(error.argument, "tz");
        let error = calendar("UTC")
            .parse_time("start", "last week")
            .unwrap_err();
        assert_eq!(error.argument, "start");
        assert!(calendar("UTC")
            .parse_time("end", "2026-11-27T10:00:00+01:00")
            .is_ok());
    }
}
