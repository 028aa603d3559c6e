/// intercom's version. The one place it is set is the VERSION file at the top of the
/// repository; a test fails when this constant says otherwise.
let intercomVersion = "0.9.0"
