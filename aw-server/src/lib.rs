//! aw-server library: the Rocket application.
