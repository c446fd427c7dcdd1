"""What the tests share, and nothing else: test modules and conftests import helpers from
here, never from each other (``tests/test_test_layout.py`` checks it); fixtures live in
the conftests.

=====================  ================================================================
`helpers`              `Api` (a bare HTTP caller), keys, documents made on the fly
`postgres`             a throwaway PostgreSQL server on a unix socket
`pgproxy`              a unix-socket proxy that loses a commit's answer
`s3server`             a throwaway S3 server (SeaweedFS)
`cutproxy`             a TCP proxy that cuts requests off mid-body
`flaky_server`         a loopback HTTP server that answers from a script
`engine_documents`     engine inputs made in code, and the engine called on them
`drawn_pages`          PDF pages drawn with reportlab for the engine tests
`batches`              hypothesis strategies for results, and their mutation
`browser`              Debian's Chromium and its arguments for the browser tests
=====================  ================================================================
"""
