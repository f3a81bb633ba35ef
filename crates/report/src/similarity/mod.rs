//! The similarity report. The method (tokens, fingerprints, base code, score) reads student bytes and so
//! lives in the intake crate, [`anatomy_intake::similarity`]; this module adds the class's report.

pub mod report;
