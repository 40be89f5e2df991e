//! The move's steps on nodes kept in memory.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use super::*;

#[derive(Default)]
struct FakeNode {
    name: &'static str,
    down: bool,
    refuse_upload: bool,
    people: RefCell<BTreeMap<String, Vec<u8>>>,
    frozen: RefCell<BTreeSet<String>>,
}

impl FakeNode {
    fn with(name: &'static str, people: &[(&str, &[u8])]) -> FakeNode {
        FakeNode {
            name,
            people: RefCell::new(
                people
                    .iter()
                    .map(|(person, data)| (person.to_string(), data.to_vec()))
                    .collect(),
            ),
            ..FakeNode::default()
        }
    }

    fn refused(&self, message: &str) -> NodesError {
        NodesError::Refused {
            node: self.name.to_string(),
            status: 409,
            message: message.to_string(),
        }
    }
}

impl Node for FakeNode {
    fn name(&self) -> String {
        self.name.to_string()
    }
    fn is_up(&self) -> Result<(), NodesError> {
        if self.down {
            return Err(NodesError::Unreachable {
                node: self.name.to_string(),
                message: "connection refused".to_string(),
            });
        }
        Ok(())
    }
    fn holds(&self, person: &str) -> Result<bool, NodesError> {
        self.is_up()?;
        Ok(self.people.borrow().contains_key(person))
    }
    fn freeze(&self, person: &str) -> Result<u64, NodesError> {
        let people = self.people.borrow();
        let data = people.get(person).ok_or_else(|| self.refused("unknown"))?;
        self.frozen.borrow_mut().insert(person.to_string());
        Ok(data.len() as u64)
    }
    fn thaw(&self, person: &str) -> Result<(), NodesError> {
        self.frozen.borrow_mut().remove(person);
        Ok(())
    }
    fn download(
        &self,
        person: &str,
        to: &Path,
        progress: &mut dyn FnMut(u64),
    ) -> Result<u64, NodesError> {
        if !self.frozen.borrow().contains(person) {
            return Err(self.refused("not frozen"));
        }
        let data = self.people.borrow()[person].clone();
        std::fs::write(to, &data)?;
        progress(data.len() as u64);
        Ok(data.len() as u64)
    }
    fn upload(
        &self,
        person: &str,
        from: &Path,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), NodesError> {
        if self.refuse_upload {
            return Err(self.refused("the disk is full"));
        }
        let data = std::fs::read(from)?;
        progress(data.len() as u64);
        self.people.borrow_mut().insert(person.to_string(), data);
        Ok(())
    }
    fn release(&self, person: &str) -> Result<Option<String>, NodesError> {
        self.people.borrow_mut().remove(person);
        self.frozen.borrow_mut().remove(person);
        Ok(Some(format!("removed/{person}")))
    }
}

fn route(folder: &Path) -> Route {
    let map = folder.join("people.map");
    std::fs::write(&map, "alice node1\nbob node1\n").unwrap();
    Route {
        runtime: None,
        map_file: Some(map),
        to_backend: "node2".to_string(),
        from_backend: Some("node1".to_string()),
    }
}

#[test]
fn a_person_moves_whole_and_the_route_follows() {
    let folder = tempfile::tempdir().unwrap();
    let from = FakeNode::with("node1", &[("alice", b"alice's year"), ("bob", b"bob's")]);
    let to = FakeNode::with("node2", &[]);
    let route = route(folder.path());
    let mut steps = Vec::new();
    let moved = move_person(&from, &to, &route, "alice", folder.path(), &mut |step| {
        steps.push(step)
    })
    .unwrap();
    assert_eq!(moved.bytes, 12);
    assert_eq!(moved.set_aside.as_deref(), Some("removed/alice"));
    assert!(moved.frozen <= moved.total);
    assert_eq!(to.people.borrow()["alice"], b"alice's year");
    assert!(!from.holds("alice").unwrap());
    assert!(from.holds("bob").unwrap(), "the others stay");
    let map = route.map_file.as_ref().unwrap();
    assert_eq!(
        haproxy::read_route(map, "alice").unwrap().as_deref(),
        Some("node2")
    );
    assert_eq!(
        haproxy::read_route(map, "bob").unwrap().as_deref(),
        Some("node1")
    );
    assert_eq!(steps.first(), Some(&Step::Checking));
    assert_eq!(steps.last(), Some(&Step::Releasing));
    assert!(
        !folder.path().join("alice.moving.db").exists(),
        "no copy left"
    );
}

#[test]
fn a_move_that_cannot_be_made_changes_nothing() {
    let folder = tempfile::tempdir().unwrap();
    let route = route(folder.path());
    let map = route.map_file.clone().unwrap();
    let from = FakeNode::with("node1", &[("alice", b"data")]);
    let cases: Vec<(FakeNode, &str, &str)> = vec![
        (
            FakeNode {
                down: true,
                ..FakeNode::with("node2", &[])
            },
            "alice",
            "did not answer",
        ),
        (
            FakeNode::with("node2", &[("alice", b"older")]),
            "alice",
            "holds 'alice' already",
        ),
        (
            FakeNode::with("node2", &[]),
            "nobody",
            "does not hold 'nobody'",
        ),
        (
            FakeNode {
                refuse_upload: true,
                ..FakeNode::with("node2", &[])
            },
            "alice",
            "the disk is full",
        ),
    ];
    for (to, person, said) in cases {
        let error = move_person(&from, &to, &route, person, folder.path(), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(error.contains(said), "{error}");
        assert!(from.holds("alice").unwrap());
        assert!(from.frozen.borrow().is_empty(), "thawed after: {said}");
        assert_eq!(
            haproxy::read_route(&map, "alice").unwrap().as_deref(),
            Some("node1")
        );
    }
}
