"""The authorization servers, protected servers, browsers and SDK clients the authorization
tests run."""
