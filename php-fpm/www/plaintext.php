<?php
// GET /plaintext for the php-fpm fixture. Content-Length is set here because nginx would
// otherwise relay the FastCGI output chunked.
$body = 'Hello, World!';
header('Content-Type: text/plain');
header('Content-Length: ' . strlen($body));
echo $body;
