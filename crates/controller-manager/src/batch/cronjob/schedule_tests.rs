use super::*;

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn standard_lines_and_descriptors_parse_and_seconds_do_not() {
    assert!(Schedule::parse("*/5 * * * *", None).is_ok());
    assert!(Schedule::parse("@hourly", None).is_ok());
    assert!(matches!(
        Schedule::parse("0 */5 * * * *", None),
        Err(ScheduleError::Unparseable(_))
    ));
    assert!(matches!(
        Schedule::parse("not a schedule", None),
        Err(ScheduleError::Unparseable(_))
    ));
    assert!(matches!(
        Schedule::parse("* * * * *", Some("Mars/Olympus")),
        Err(ScheduleError::UnknownTimeZone(_))
    ));
    // A zone named in the line is part of the line: robfig/cron refuses the line.
    assert!(matches!(
        Schedule::parse("TZ=Mars/Olympus * * * * *", None),
        Err(ScheduleError::Unparseable(_))
    ));
}

#[test]
fn next_is_strictly_after_and_follows_the_time_zone() {
    let hourly = Schedule::parse("0 * * * *", None).unwrap();
    assert_eq!(
        hourly.next(at("2026-01-01T10:00:00Z")),
        Some(at("2026-01-01T11:00:00Z"))
    );
    let nine = Schedule::parse("0 9 * * *", Some("Europe/Berlin")).unwrap();
    assert_eq!(
        nine.next(at("2026-01-01T00:00:00Z")),
        Some(at("2026-01-01T08:00:00Z"))
    );
    let prefixed = Schedule::parse("TZ=Europe/Berlin 0 9 * * *", None).unwrap();
    assert_eq!(
        prefixed.next(at("2026-07-01T00:00:00Z")),
        Some(at("2026-07-01T07:00:00Z"))
    );
}

#[test]
fn the_most_recent_missed_time_is_found() {
    let minutely = Schedule::parse("* * * * *", None).unwrap();
    let created = at("2026-01-01T10:00:30Z");
    let before = most_recent(&minutely, created, None, at("2026-01-01T10:00:50Z")).unwrap();
    assert_eq!(before.most_recent, None);
    let one = most_recent(&minutely, created, None, at("2026-01-01T10:01:10Z")).unwrap();
    assert_eq!(one.most_recent, Some(at("2026-01-01T10:01:00Z")));
    let many = most_recent(&minutely, created, None, at("2026-01-01T12:05:10Z")).unwrap();
    assert_eq!(many.most_recent, Some(at("2026-01-01T12:05:00Z")));
    assert!(too_many_missed(&many));
    let deadline = most_recent(&minutely, created, Some(30), at("2026-01-01T12:05:10Z")).unwrap();
    assert_eq!(deadline.most_recent, Some(at("2026-01-01T12:05:00Z")));
    assert!(!too_many_missed(&deadline));
}

#[test]
fn a_schedule_that_never_fires_is_an_error() {
    // croner may refuse February 31st outright; if it parses, no time is ever found.
    match Schedule::parse("0 0 31 2 *", None) {
        Err(e) => assert!(matches!(e, ScheduleError::Unparseable(_))),
        Ok(never) => {
            let found = most_recent(
                &never,
                at("2026-01-01T00:00:00Z"),
                None,
                at("2027-01-01T00:00:00Z"),
            );
            assert!(found.is_err() || found.unwrap().most_recent.is_none());
        }
    }
}

#[test]
fn the_next_look_is_just_after_the_next_time() {
    let minutely = Schedule::parse("* * * * *", None).unwrap();
    let created = at("2026-01-01T10:00:30Z");
    let wait = next_after(&minutely, None, created, at("2026-01-01T10:00:40Z"));
    assert_eq!(wait, Duration::from_millis(20_100));
    let after_run = next_after(
        &minutely,
        Some(at("2026-01-01T10:01:00Z")),
        created,
        at("2026-01-01T10:01:02Z"),
    );
    assert_eq!(after_run, Duration::from_millis(58_100));
}

#[test]
fn jobs_are_named_by_the_minute_and_stamped_in_the_zone() {
    let t = at("2026-11-28T20:13:00Z");
    assert_eq!(
        job_name("every", t),
        format!("every-{}", t.as_second() / 60)
    );
    let utc = Schedule::parse("* * * * *", None).unwrap();
    assert_eq!(scheduled_stamp(&utc, t), "2026-11-28T20:13:00Z");
    let berlin = Schedule::parse("* * * * *", Some("Europe/Berlin")).unwrap();
    assert_eq!(scheduled_stamp(&berlin, t), "2026-11-28T21:13:00+01:00");
}
