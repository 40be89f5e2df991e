//! A plan shown or carried out: the dry run's figures, the chunks of a
//! merge under the journal, and the roll forward after a crash.

use std::time::Instant;

use aw_datastore::{BucketRename, Datastore, HostChange, MergeCounts};
use aw_models::{BucketAction, HostReport, PlannedBucket};

use crate::plan::{Operation, Plan};
use crate::{HostsError, Result};

/// Events a merge moves per writer job: heartbeats queued behind one job
/// wait a few milliseconds at most (`benches/runs/`).
pub const CHUNK: usize = 250;

/// Longest pause between two chunks of a merge: after each, the merge
/// waits as long as the chunk took (up to this), so the writer is free
/// for heartbeats at least half the time and a merge is background work.
const MOST_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

fn seconds(nanos: i64) -> f64 {
    nanos as f64 / 1e9
}

fn planned(step: &crate::Step, events: u64, counts: MergeCounts) -> PlannedBucket {
    PlannedBucket {
        from: step.from.clone(),
        to: step.to.clone(),
        action: step.action,
        events,
        moved: counts.moved,
        cut: counts.cut,
        dropped: counts.dropped,
        overlap_seconds: seconds(counts.overlap),
    }
}

fn report(plan: &Plan, buckets: Vec<PlannedBucket>, dry_run: bool, started: Instant) -> HostReport {
    HostReport {
        operation: plan.operation.name().to_string(),
        from: plan.from.clone(),
        to: plan.to.clone(),
        buckets,
        dry_run,
        alias: plan.from.clone(),
        snapshot: None,
        snapshot_skipped: None,
        seconds: started.elapsed().as_secs_f64(),
    }
}

fn count(store: &Datastore, bucket_id: &str) -> Result<u64> {
    Ok(store.count_events(bucket_id, None, None).wait()?)
}

/// What the plan would do now, changing nothing.
pub fn preview(store: &Datastore, plan: &Plan) -> Result<HostReport> {
    let started = Instant::now();
    let mut buckets = Vec::new();
    for step in &plan.steps {
        let events = count(store, &step.from)?;
        let counts = match step.action {
            BucketAction::Rename => MergeCounts {
                moved: events,
                ..MergeCounts::default()
            },
            BucketAction::Merge => store.merge_preview(&step.from, &step.to)?,
        };
        buckets.push(planned(step, events, counts));
    }
    Ok(report(plan, buckets, true, started))
}

fn refuse_if_busy(store: &Datastore) -> Result<()> {
    match store.hosts_journal()? {
        Some(text) => Err(HostsError::Busy(describe(&text))),
        None => Ok(()),
    }
}

fn describe(journal: &str) -> String {
    match serde_json::from_str::<Plan>(journal) {
        Ok(plan) => format!(
            "{} of host '{}' into '{}'",
            plan.operation.name(),
            plan.from,
            plan.to
        ),
        Err(_) => "an unreadable journal".to_string(),
    }
}

/// Carries out the plan; `progress` hears the events moved so far and
/// the total. A merge stores the plan as the journal first, so a crash
/// midway is finished by [`resume`].
pub fn apply(
    store: &Datastore,
    plan: &Plan,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<HostReport> {
    let started = Instant::now();
    refuse_if_busy(store)?;
    if plan.operation == Operation::Merge {
        let journal = serde_json::to_string(plan).map_err(|error| {
            HostsError::Store(aw_datastore::DatastoreError::InvalidInput(
                error.to_string(),
            ))
        })?;
        store.set_hosts_journal(Some(journal))?;
    }
    let buckets = carry_out_counted(store, plan, progress)?;
    Ok(report(plan, buckets, false, started))
}

/// [`carry_out`] with each bucket's events counted first: the report's
/// buckets.
fn carry_out_counted(
    store: &Datastore,
    plan: &Plan,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Vec<PlannedBucket>> {
    let mut events = Vec::new();
    for step in &plan.steps {
        events.push(count(store, &step.from)?);
    }
    let total = events.iter().sum();
    let counts = carry_out(store, plan, total, progress)?;
    Ok(plan
        .steps
        .iter()
        .zip(events)
        .zip(counts)
        .map(|((step, events), counts)| planned(step, events, counts))
        .collect())
}

/// The merges' chunks, then the last step; the counts per step.
fn carry_out(
    store: &Datastore,
    plan: &Plan,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Vec<MergeCounts>> {
    let mut counts = vec![MergeCounts::default(); plan.steps.len()];
    let mut done = 0;
    for (step, counts) in plan.steps.iter().zip(counts.iter_mut()) {
        match step.action {
            BucketAction::Rename => {
                *counts = MergeCounts {
                    moved: count(store, &step.from)?,
                    ..MergeCounts::default()
                };
            }
            BucketAction::Merge => loop {
                let started = Instant::now();
                let taken = store.merge_events(&step.from, &step.to, CHUNK)?;
                std::thread::sleep(started.elapsed().min(MOST_PAUSE));
                counts.add(taken.counts);
                done += taken.counts.moved + taken.counts.cut + taken.counts.dropped;
                progress(done, total);
                if !taken.remaining {
                    break;
                }
            },
        }
    }
    let change = HostChange {
        renames: plan
            .steps
            .iter()
            .filter(|step| step.action == BucketAction::Rename)
            .map(|step| BucketRename {
                from: step.from.clone(),
                to: step.to.clone(),
                hostname: plan.to.clone(),
            })
            .collect(),
        merges: plan
            .steps
            .iter()
            .filter(|step| step.action == BucketAction::Merge)
            .map(|step| (step.from.clone(), step.to.clone()))
            .collect(),
        alias: Some((plan.from.clone(), plan.to.clone())),
        clear_journal: plan.operation == Operation::Merge,
        states: Vec::new(),
    };
    // What heartbeats added to a merged bucket meanwhile moves in the
    // last step; its counts are the plan's total.
    let last = store.change_hosts(change)?;
    if let Some((_, counts)) = plan
        .steps
        .iter()
        .zip(counts.iter_mut())
        .rfind(|(step, _)| step.action == BucketAction::Merge)
    {
        counts.add(last);
    }
    progress(total, total);
    Ok(counts)
}

/// A change a caller asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Host `from` renamed to `to`.
    Rename {
        /// The host now.
        from: String,
        /// Its new name.
        to: String,
    },
    /// Host `from` merged into `into`.
    Merge {
        /// The host merged away.
        from: String,
        /// The host that receives its buckets.
        into: String,
    },
}

/// Plans `change` on the buckets as they are; with `dry_run` answers the
/// plan's figures, else writes a snapshot first (`snapshot` answers its
/// path, or why there is none: the change goes on, and the report says
/// so) and carries it out.
pub fn change(
    store: &Datastore,
    change: &Change,
    dry_run: bool,
    snapshot: &mut dyn FnMut() -> std::result::Result<String, String>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<HostReport> {
    let buckets = store.buckets().wait()?;
    let plan = match change {
        Change::Rename { from, to } => crate::plan_rename(&buckets, from, to)?,
        Change::Merge { from, into } => crate::plan_merge(&buckets, from, into)?,
    };
    if dry_run {
        return preview(store, &plan);
    }
    refuse_if_busy(store)?;
    let taken = snapshot();
    let mut report = apply(store, &plan, progress)?;
    match taken {
        Ok(path) => report.snapshot = Some(path),
        Err(why) => report.snapshot_skipped = Some(why),
    }
    Ok(report)
}

/// Finishes a merge a crash interrupted (the journal is there): the
/// buckets still to merge are merged, those already gone skipped.
/// `None` when nothing was under way.
pub fn resume(store: &Datastore) -> Result<Option<HostReport>> {
    let Some(text) = store.hosts_journal()? else {
        return Ok(None);
    };
    let started = Instant::now();
    let Ok(mut plan) = serde_json::from_str::<Plan>(&text) else {
        log::error!("The journal of a change of hosts is unreadable; it is cleared: {text}");
        store.set_hosts_journal(None)?;
        return Ok(None);
    };
    let buckets = store.buckets().wait()?;
    plan.steps.retain(|step| {
        buckets.contains_key(&step.from)
            && match step.action {
                BucketAction::Merge => buckets.contains_key(&step.to),
                BucketAction::Rename => !buckets.contains_key(&step.to),
            }
    });
    log::warn!(
        "Finishing the {} of host '{}' into '{}' that was under way: {} buckets left",
        plan.operation.name(),
        plan.from,
        plan.to,
        plan.steps.len()
    );
    let buckets = carry_out_counted(store, &plan, &mut |_, _| {})?;
    // A merge's last step cleared it; a journal of anything else too.
    store.set_hosts_journal(None)?;
    Ok(Some(report(&plan, buckets, false, started)))
}
