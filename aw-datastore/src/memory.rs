//! What the writer knows beyond the SQL, lent to every write job.
//!
//! A job (`worker.rs`) gets the connection and a [`WriterMemory`]: the
//! remembered last heartbeat events, the duration bounds, the bucket facts
//! and the privacy rules in force. A job keeps them true as it changes the
//! rows; the writer undoes what a failed job or batch may have taught them
//! (the facts through `stats.rs`, the rules through [`RulesInForce`], the
//! last events by forgetting them all).

use std::ops::Deref;

use crate::bounds::DurationBounds;
use crate::heartbeat::LastEvents;
use crate::privacy::PrivacyRules;
use crate::stats::StatsWriter;
use crate::touched::Touches;

/// The writer's memory that jobs read and update.
#[derive(Debug)]
pub(crate) struct WriterMemory<'a> {
    /// Remembered heartbeat results.
    pub(crate) last_events: &'a mut LastEvents,
    /// Longest durations, shared with the readers.
    pub(crate) bounds: &'a DurationBounds,
    /// Count and edges of each bucket, published at commit.
    pub(crate) stats: &'a mut StatsWriter,
    /// The privacy rules in force.
    pub(crate) privacy: &'a mut RulesInForce,
    /// What the open batch touched, when a watcher is told
    /// (`touched.rs`): for bulk inserts that tell it themselves.
    pub(crate) touches: Option<&'a Touches>,
}

/// The privacy rules the writer applies, and the rules to put back if
/// the job or the batch that replaced them fails (the setting they were
/// compiled from is then rolled back too).
#[derive(Debug, Default)]
pub(crate) struct RulesInForce {
    rules: PrivacyRules,
    before_batch: Option<PrivacyRules>,
    before_job: Option<PrivacyRules>,
}

impl RulesInForce {
    pub(crate) fn new(rules: PrivacyRules) -> RulesInForce {
        RulesInForce {
            rules,
            ..RulesInForce::default()
        }
    }

    /// Puts `rules` in force for the rest of the batch and after, unless
    /// the job or its batch fails.
    pub(crate) fn replace(&mut self, rules: PrivacyRules) {
        let old = std::mem::replace(&mut self.rules, rules);
        self.before_job.get_or_insert(old);
    }

    /// The job succeeded: its rules stand unless the batch fails.
    pub(crate) fn job_done(&mut self) {
        if let Some(old) = self.before_job.take() {
            self.before_batch.get_or_insert(old);
        }
    }

    /// The job was rolled back: so are its rules.
    pub(crate) fn job_failed(&mut self) {
        if let Some(old) = self.before_job.take() {
            self.rules = old;
        }
    }

    /// The batch committed: its rules are the ones stored.
    pub(crate) fn batch_committed(&mut self) {
        self.before_batch = None;
    }

    /// The batch was rolled back: the rules before it are back.
    pub(crate) fn batch_failed(&mut self) {
        self.job_failed();
        if let Some(old) = self.before_batch.take() {
            self.rules = old;
        }
    }
}

impl Deref for RulesInForce {
    type Target = PrivacyRules;

    fn deref(&self) -> &PrivacyRules {
        &self.rules
    }
}
