//! Whose data a request reads and writes: one database file as served
//! ([`Served`]: its store, its tokens, its cache, its snapshots). A server
//! of one person serves its own file to every request; a server that
//! hosts several (`[users] enabled`, [`Hosting`]) serves each request the
//! file of the person its token belongs to, opened on first use and
//! closed after a quiet while (`aw_users::pool`).
//!
//! Handlers take `&Served` as a guard: the gate (`security.rs`) decided
//! it with the credential, and no path, bucket id or query can name
//! another person's file.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use aw_datastore::Datastore;
use aw_jobs::Jobs;
use aw_models::Timestamp;
use aw_users::pool::{Pool, PoolError};
use aw_users::{Users, UsersError};
use rocket::http::Status;
use rocket::request::{FromRequest, Outcome, Request};

use crate::auth::{self, Access, Auth, Failure};
use crate::config::ServerConfig;
use crate::ServerState;

/// One database file as the server serves it.
#[derive(Debug)]
pub struct Served {
    /// Its store.
    pub datastore: Datastore,
    /// Its tokens (in the file) and the write-token checks.
    pub auth: Arc<Auth>,
    /// Answers for its finished periods; `None` when the cache is off.
    pub cache: Option<Arc<aw_cache::Cache>>,
    /// The file.
    pub db_path: PathBuf,
    /// Its snapshots, retention, folder sync and hub states.
    pub jobs: Jobs,
    /// The person it is, on a server that hosts several.
    pub user: Option<String>,
}

impl Served {
    /// The one file of a server of one person.
    pub fn own(datastore: Datastore, auth: Arc<Auth>, config: &ServerConfig) -> Served {
        Served {
            cache: cache_for(&datastore, config.cache),
            jobs: Jobs {
                backups: Arc::new(aw_jobs::backup::Backups::new(config.backup.clone())),
                retention: Arc::new(aw_jobs::retention::Retention::new(config.keep_days)),
                sync: Arc::new(aw_jobs::sync::SyncState::new(
                    config.sync.clone(),
                    config.device_id.clone(),
                    config.hostname.clone(),
                )),
                hub: Arc::new(aw_jobs::hub::HubState::new(
                    config.hub.clone(),
                    config.device_id.clone(),
                    config.hostname.clone(),
                )),
            },
            datastore,
            auth,
            db_path: config.db_path.clone(),
            user: None,
        }
    }

    /// Closes the store: every acknowledged write is on disk after.
    pub fn close(&self) {
        if let Err(error) = self.datastore.close() {
            let whose = self.user.as_deref().unwrap_or("the server");
            log::error!("Closing the database of {whose} failed: {error}");
        }
    }
}

/// The cache of finished periods over `datastore`, if `config` has one.
fn cache_for(
    datastore: &Datastore,
    config: Option<aw_cache::CacheConfig>,
) -> Option<Arc<aw_cache::Cache>> {
    config.map(|config| {
        let cache = Arc::new(aw_cache::Cache::new(config));
        cache.keep_summaries_as(aw_summary::kept_day);
        // Before the first request: every write from now on reaches it.
        datastore.watch_writes(cache.watcher());
        cache
    })
}

/// How often each person's retention runs.
const RETENTION_PERIOD: Duration = Duration::from_secs(24 * 60 * 60);
/// How often the people's scheduled jobs are looked at.
const JOBS_CHECK: Duration = Duration::from_secs(60);

/// The part of a user's cache of the server's (each open user has one).
const USER_CACHE_SHARE: usize = 8;

/// The people of a server that hosts several, and their open files.
#[derive(Debug)]
pub struct Hosting {
    /// The users' folder and index.
    pub users: Users,
    settings: aw_users::Settings,
    open: Pool<Served>,
    /// Whose each token is (its hash in hex), as learnt from the index.
    owners: RwLock<HashMap<String, String>>,
    /// What a user's file is served with.
    backup: aw_jobs::backup::BackupSettings,
    keep_days: Option<u32>,
    cache: Option<aw_cache::CacheConfig>,
    trusted_proxies: Vec<auth::IpRange>,
    device_id: String,
    hostname: String,
    /// When each person's retention last ran (since the start).
    retention_runs: std::sync::Mutex<HashMap<String, std::time::Instant>>,
    /// The people frozen for a move to another node (their markers, read
    /// at the start and kept here): their requests answer 503.
    moving: RwLock<HashSet<String>>,
    /// The server administrator's key (`[auth] api_key`), the same on
    /// every node: what this node asks the others with.
    server_key: Option<String>,
}

impl Hosting {
    /// The users under the data folder of `config` (the database file's
    /// folder). An existing database file there becomes the data of
    /// `first_user` when no such user exists yet.
    pub fn open(config: &ServerConfig) -> Result<Hosting, UsersError> {
        let settings = config.users.clone().unwrap_or_default();
        let data_dir = config
            .db_path
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default();
        let users = Users::open(&data_dir)?;
        if config.db_path.exists() && users.index().user(&settings.first_user)?.is_none() {
            let moved = users.adopt(&settings.first_user, &config.db_path)?;
            log::warn!(
                "Users are on: the database {} is now the data of user '{}' ({}), with its tokens",
                config.db_path.display(),
                settings.first_user,
                moved.display()
            );
        }
        let owners = users
            .index()
            .token_owners()?
            .into_iter()
            .collect::<HashMap<_, _>>();
        let cache = config.cache.map(|cache| aw_cache::CacheConfig {
            max_bytes: (cache.max_bytes / USER_CACHE_SHARE).max(1 << 20),
            // No hints of a user's last run are kept yet.
            prewarm: false,
            ..cache
        });
        let moving = RwLock::new(users.frozen()?.into_iter().collect());
        Ok(Hosting {
            moving,
            users,
            open: Pool::new(settings.max_open, settings.quiet),
            settings,
            owners: RwLock::new(owners),
            backup: config.backup.clone(),
            keep_days: config.keep_days,
            cache,
            trusted_proxies: config.trusted_proxies.clone(),
            device_id: config.device_id.clone(),
            hostname: config.hostname.clone(),
            retention_runs: std::sync::Mutex::default(),
            server_key: config.api_key.clone(),
        })
    }

    /// The server administrator's key, to ask the other nodes with.
    pub fn server_key(&self) -> Option<&str> {
        self.server_key.as_deref()
    }

    /// How the server hosts its users.
    pub fn settings(&self) -> &aw_users::Settings {
        &self.settings
    }

    /// The access and the file of a person's token in `headers`; the
    /// server administrator's key (`[auth] api_key`, in `server`) has
    /// no file.
    pub fn authenticate(
        &self,
        server: &Auth,
        headers: &[&str],
        now: Timestamp,
    ) -> Result<(Access, Option<Arc<Served>>), Failure> {
        match server.authenticate(headers.iter().copied(), now) {
            Err(Failure::Unknown) => {}
            other => return other.map(|access| (access, None)),
        }
        let secret = auth::secret(headers.iter().copied())?;
        let Some(user) = self.owner(&auth::token_hash(&secret)) else {
            // A token naming a person another node holds (a proxy's stale
            // route): said so, and retried there, never served here.
            return Err(match auth::person_of(&secret) {
                Some(person) if !self.holds(person) => Failure::Misdirected,
                _ => Failure::Unknown,
            });
        };
        if self.is_moving(&user) {
            return Err(Failure::Moving);
        }
        let served = self.served(&user).map_err(|error| {
            log::error!("Could not open the data of user '{user}': {error}");
            Failure::Unavailable
        })?;
        let access = served.auth.authenticate(headers.iter().copied(), now)?;
        Ok((access, Some(served)))
    }

    /// Whose token `hash` is: remembered, else asked of the index (a
    /// user added by the command while the server runs).
    fn owner(&self, hash: &str) -> Option<String> {
        if let Some(user) = self.read_owners().get(hash) {
            return Some(user.clone());
        }
        let user = self.users.index().user_of_token(hash).ok().flatten()?;
        let mut owners = self.owners.write().unwrap_or_else(|e| e.into_inner());
        owners.insert(hash.to_string(), user.clone());
        Some(user)
    }

    /// Whether person `name` is one of this node's.
    fn holds(&self, name: &str) -> bool {
        self.users.index().user(name).ok().flatten().is_some()
    }

    /// Whether person `name` is frozen for a move.
    pub fn is_moving(&self, name: &str) -> bool {
        let moving = self.moving.read().unwrap_or_else(|e| e.into_inner());
        !moving.is_empty() && moving.contains(name)
    }

    /// Freezes person `name` for a move (`aw_users::moving`): from now on
    /// their requests answer 503, their jobs wait, and their file is
    /// closed, whole, for the copy. Answers the file and its size.
    pub fn freeze(&self, name: &str) -> Result<(PathBuf, u64), UsersError> {
        self.users.freeze(name)?;
        self.moving
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string());
        if let Some(served) = self.open.take(name) {
            served.close();
        }
        let file = self.users.frozen_file(name)?;
        let bytes = std::fs::metadata(&file)?.len();
        log::warn!("User '{name}' is frozen for a move ({bytes} bytes): their requests answer 503");
        Ok((file, bytes))
    }

    /// Ends the freeze of person `name` (a move given up).
    pub fn thaw(&self, name: &str) -> Result<(), UsersError> {
        self.users.thaw(name)?;
        self.moving
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        log::warn!("User '{name}' is served here again (their move was given up)");
        Ok(())
    }

    /// The whole file of frozen person `name`, for the copy.
    pub fn frozen_file(&self, name: &str) -> Result<PathBuf, UsersError> {
        if !self.holds(name) {
            return Err(UsersError::Unknown(name.to_string()));
        }
        if !self.is_moving(name) {
            return Err(UsersError::NotFrozen(name.to_string()));
        }
        self.users.frozen_file(name)
    }

    fn read_owners(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, String>> {
        self.owners.read().unwrap_or_else(|e| e.into_inner())
    }

    /// User `name`'s file, opened if it is not open.
    pub fn served(&self, name: &str) -> Result<Arc<Served>, String> {
        self.open
            .get(name, || self.open_user(name), |quiet| quiet.close())
            .map_err(|error| match error {
                PoolError::Full(_) => error.to_string(),
                PoolError::Open(why) => why,
            })
    }

    fn open_user(&self, name: &str) -> Result<Served, String> {
        if self.is_moving(name) {
            return Err(format!(
                "user '{name}' is frozen for a move to another node"
            ));
        }
        let file = self.users.file_of(name);
        if !file.exists() {
            return Err(format!("{} is missing", file.display()));
        }
        let datastore = Datastore::open(&file).map_err(|error| error.to_string())?;
        crate::finish_host_change(&datastore);
        if let Err(error) = Users::claim(&datastore, name) {
            log::warn!("Could not mark the file of user '{name}' as theirs: {error}");
        }
        let auth = Arc::new(
            Auth::load(datastore.clone(), None, self.trusted_proxies.clone())
                .map_err(|error| error.to_string())?,
        );
        let backup = self.backup_of(name);
        log::info!("Opened the data of user '{name}'");
        Ok(Served {
            cache: cache_for(&datastore, self.cache),
            jobs: Jobs {
                backups: Arc::new(aw_jobs::backup::Backups::new(backup)),
                retention: Arc::new(aw_jobs::retention::Retention::new(self.keep_days)),
                sync: Arc::new(aw_jobs::sync::SyncState::new(
                    None,
                    self.device_id.clone(),
                    self.hostname.clone(),
                )),
                hub: Arc::new(aw_jobs::hub::HubState::new(
                    None,
                    self.device_id.clone(),
                    self.hostname.clone(),
                )),
            },
            datastore,
            auth,
            db_path: file,
            user: Some(name.to_string()),
        })
    }

    /// User `name`'s `[backup]`: a folder of their own in the backup
    /// folder; the schedule is the hosting's ([`Hosting::run_due_jobs`]).
    fn backup_of(&self, name: &str) -> aw_jobs::backup::BackupSettings {
        aw_jobs::backup::BackupSettings {
            dir: self.backup.dir.join(aw_users::USERS_FOLDER).join(name),
            ..self.backup.clone()
        }
    }

    /// The people's scheduled jobs that are due: a snapshot of each
    /// person's file an interval after their newest scheduled one (when
    /// `[backup] enabled`), retention once a day (when `[retention]`).
    /// A person's file opens for it and closes when quiet again.
    pub fn run_due_jobs(&self) {
        if !self.backup.enabled && self.keep_days.is_none() {
            return;
        }
        let users = match self.users.index().users() {
            Ok(users) => users,
            Err(error) => {
                log::error!("Could not read the users for their scheduled jobs: {error}");
                return;
            }
        };
        let now = Timestamp::now();
        for user in users {
            let name = user.name;
            if self.is_moving(&name) {
                continue;
            }
            let backup_due = self.backup.enabled
                && aw_jobs::backup::Backups::new(self.backup_of(&name)).due(now) <= now;
            let retention_due = self.keep_days.is_some_and(|_| {
                let runs = self
                    .retention_runs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                runs.get(&name)
                    .is_none_or(|last| last.elapsed() >= RETENTION_PERIOD)
            });
            if !backup_due && !retention_due {
                continue;
            }
            let served = match self.served(&name) {
                Ok(served) => served,
                Err(error) => {
                    log::error!("Could not open the data of user '{name}' for its jobs: {error}");
                    continue;
                }
            };
            if backup_due {
                if let Err(error) = served.jobs.backups.take(&served.datastore, true) {
                    log::error!("The scheduled snapshot of user '{name}' failed: {error}");
                }
            }
            if let (true, Some(keep_days)) = (retention_due, self.keep_days) {
                self.retention_runs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(name.clone(), std::time::Instant::now());
                if let Err(error) = aw_jobs::retention::run(&served.datastore, keep_days, now) {
                    log::error!("Retention of user '{name}' failed: {error}");
                }
            }
        }
    }

    /// The tokens of user `name` changed (made or revoked through the
    /// server): the index learns their hashes again.
    pub fn tokens_changed(&self, name: &str) -> Result<(), UsersError> {
        let hashes: Vec<String> = match self.open.peek(name) {
            Some(served) => served
                .datastore
                .tokens()?
                .into_iter()
                .map(|stored| stored.hash)
                .collect(),
            None => return self.users.reindex(name),
        };
        match self.users.index().set_token_hashes(name, &hashes)? {
            Ok(()) => {}
            Err(other) => {
                return Err(UsersError::SharedToken {
                    user: name.to_string(),
                    other,
                })
            }
        }
        self.forget_owners(name);
        Ok(())
    }

    /// Forgets whose tokens `name`'s were (revoked, or the user removed).
    fn forget_owners(&self, name: &str) {
        self.owners
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, user| user != name);
    }

    /// Removes user `name` (`Users::remove`), closing their file first.
    pub fn remove(&self, name: &str, delete: bool) -> Result<Option<PathBuf>, UsersError> {
        if self.users.index().user(name)?.is_none() {
            return Err(UsersError::Unknown(name.to_string()));
        }
        self.forget_owners(name);
        if let Some(served) = self.open.take(name) {
            served.close();
        }
        let removed = self.users.remove(name, delete)?;
        self.moving
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        Ok(removed)
    }

    /// The names of the users whose files are open.
    pub fn open_users(&self) -> Vec<String> {
        self.open.open_names()
    }

    /// Closes the files unused for the quiet while.
    pub fn close_quiet(&self) {
        for (name, served) in self.open.quiet_ones() {
            served.close();
            log::info!("Closed the data of user '{name}' (unused for a while)");
        }
    }

    /// Closes every open file (at shutdown).
    pub fn close_all(&self) {
        for (_, served) in self.open.take_all() {
            served.close();
        }
    }

    /// Closes quiet files and runs the people's due jobs, on one thread
    /// for every person, until the hosting is dropped.
    pub fn start_closing(hosting: &Arc<Hosting>) {
        let step =
            (hosting.settings.quiet / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
        let weak: Weak<Hosting> = Arc::downgrade(hosting);
        let started = std::thread::Builder::new()
            .name("aw-users".to_string())
            .spawn(move || {
                let mut jobs_checked: Option<std::time::Instant> = None;
                loop {
                    let Some(hosting) = weak.upgrade() else {
                        return;
                    };
                    if jobs_checked.is_none_or(|at| at.elapsed() >= JOBS_CHECK) {
                        jobs_checked = Some(std::time::Instant::now());
                        hosting.run_due_jobs();
                    }
                    hosting.close_quiet();
                    drop(hosting);
                    std::thread::sleep(step);
                }
            });
        if let Err(error) = started {
            log::error!("Could not start the people's closer and jobs: {error}");
        }
    }
}

/// The file the gate chose for a request, when it is a user's.
#[derive(Debug, Default)]
pub(crate) struct Tenant(pub(crate) Option<Arc<Served>>);

#[rocket::async_trait]
impl<'r> FromRequest<'r> for &'r Served {
    type Error = ();

    async fn from_request(request: &'r Request<'_>) -> Outcome<Self, ()> {
        if let Tenant(Some(served)) = request.local_cache(Tenant::default) {
            return Outcome::Success(served);
        }
        match request
            .rocket()
            .state::<ServerState>()
            .and_then(|state| state.own.as_deref())
        {
            Some(own) => Outcome::Success(own),
            // The gate refuses such requests first: the server
            // administrator's key on a person's data.
            None => Outcome::Error((Status::Forbidden, ())),
        }
    }
}
