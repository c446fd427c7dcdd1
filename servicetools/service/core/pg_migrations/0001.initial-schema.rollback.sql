DROP TABLE results;
DROP TABLE statuses;
DROP TABLE extractions;
DROP TABLE documents;
DROP TABLE api_keys;
DROP TABLE users;
