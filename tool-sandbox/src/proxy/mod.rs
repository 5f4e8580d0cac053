//! The filtering HTTP(S) proxy (work in progress, issue 22).
